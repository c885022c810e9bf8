package dev.nixl4j.sample.model;

import java.util.List;

/**
 * A plain reference of the llama forward pass for the tests, written apart from the
 * engine: every weight dequantized by {@link Dequantize} (through
 * {@link GgufFile#dequantizeRow}), every sum in double, the whole sequence recomputed
 * from scratch without a cache.
 */
final class ReferenceLlama {

	private final int layers;

	private final int dim;

	private final int heads;

	private final int kvHeads;

	private final int headDim;

	private final double base;

	private final double eps;

	private final double[][] embedding;

	private final double[] outputNorm;

	private final List<double[][]> wq;

	private final List<double[][]> wk;

	private final List<double[][]> wv;

	private final List<double[][]> wo;

	private final List<double[][]> gate;

	private final List<double[][]> up;

	private final List<double[][]> down;

	private final List<double[]> attnNorm;

	private final List<double[]> ffnNorm;

	ReferenceLlama(GgufFile file) {
		GgufMetadata m = file.metadata();
		this.layers = m.getInt("llama.block_count");
		this.dim = m.getInt("llama.embedding_length");
		this.heads = m.getInt("llama.attention.head_count");
		this.kvHeads = m.getInt("llama.attention.head_count_kv");
		this.headDim = this.dim / this.heads;
		this.base = m.getFloat("llama.rope.freq_base");
		this.eps = m.getFloat("llama.attention.layer_norm_rms_epsilon");
		this.embedding = rows(file, "token_embd.weight");
		this.outputNorm = rows(file, "output_norm.weight")[0];
		this.wq = perLayer(file, "attn_q");
		this.wk = perLayer(file, "attn_k");
		this.wv = perLayer(file, "attn_v");
		this.wo = perLayer(file, "attn_output");
		this.gate = perLayer(file, "ffn_gate");
		this.up = perLayer(file, "ffn_up");
		this.down = perLayer(file, "ffn_down");
		this.attnNorm = perLayer(file, "attn_norm").stream().map((r) -> r[0]).toList();
		this.ffnNorm = perLayer(file, "ffn_norm").stream().map((r) -> r[0]).toList();
	}

	private List<double[][]> perLayer(GgufFile file, String name) {
		return java.util.stream.IntStream.range(0, this.layers)
			.mapToObj((i) -> rows(file, "blk." + i + "." + name + ".weight"))
			.toList();
	}

	private static double[][] rows(GgufFile file, String name) {
		GgufTensorInfo t = file.tensor(name);
		double[][] result = new double[(int) t.rowCount()][];
		for (int r = 0; r < result.length; r++) {
			float[] row = file.dequantizeRow(t, r);
			result[r] = new double[row.length];
			for (int i = 0; i < row.length; i++) {
				result[r][i] = row[i];
			}
		}
		return result;
	}

	/** Returns the logits of every token of the sequence, positions from 0. */
	double[][] logits(int[] tokens) {
		int n = tokens.length;
		double[][] x = new double[n][];
		for (int t = 0; t < n; t++) {
			x[t] = this.embedding[tokens[t]].clone();
		}
		for (int l = 0; l < this.layers; l++) {
			double[][] q = new double[n][];
			double[][] k = new double[n][];
			double[][] v = new double[n][];
			for (int t = 0; t < n; t++) {
				double[] h = rmsNorm(x[t], this.attnNorm.get(l));
				q[t] = rope(times(this.wq.get(l), h), t);
				k[t] = rope(times(this.wk.get(l), h), t);
				v[t] = times(this.wv.get(l), h);
			}
			for (int t = 0; t < n; t++) {
				double[] attention = new double[this.dim];
				for (int hd = 0; hd < this.heads; hd++) {
					int kv = hd / (this.heads / this.kvHeads);
					double[] scores = new double[t + 1];
					double max = Double.NEGATIVE_INFINITY;
					for (int s = 0; s <= t; s++) {
						double dot = 0;
						for (int i = 0; i < this.headDim; i++) {
							dot += q[t][hd * this.headDim + i] * k[s][kv * this.headDim + i];
						}
						scores[s] = dot / Math.sqrt(this.headDim);
						max = Math.max(max, scores[s]);
					}
					double sum = 0;
					for (int s = 0; s <= t; s++) {
						scores[s] = Math.exp(scores[s] - max);
						sum += scores[s];
					}
					for (int s = 0; s <= t; s++) {
						for (int i = 0; i < this.headDim; i++) {
							attention[hd * this.headDim + i] += scores[s] / sum * v[s][kv * this.headDim + i];
						}
					}
				}
				double[] o = times(this.wo.get(l), attention);
				for (int i = 0; i < this.dim; i++) {
					x[t][i] += o[i];
				}
				double[] h = rmsNorm(x[t], this.ffnNorm.get(l));
				double[] g = times(this.gate.get(l), h);
				double[] u = times(this.up.get(l), h);
				for (int i = 0; i < g.length; i++) {
					g[i] = g[i] / (1 + Math.exp(-g[i])) * u[i];
				}
				double[] d = times(this.down.get(l), g);
				for (int i = 0; i < this.dim; i++) {
					x[t][i] += d[i];
				}
			}
		}
		double[][] logits = new double[n][];
		for (int t = 0; t < n; t++) {
			logits[t] = times(this.embedding, rmsNorm(x[t], this.outputNorm));
		}
		return logits;
	}

	private double[] rmsNorm(double[] x, double[] weight) {
		double squares = 0;
		for (double value : x) {
			squares += value * value;
		}
		double scale = 1 / Math.sqrt(squares / x.length + this.eps);
		double[] out = new double[x.length];
		for (int i = 0; i < x.length; i++) {
			out[i] = x[i] * scale * weight[i];
		}
		return out;
	}

	/** Rotates each head's adjacent pairs (2i, 2i + 1) by pos * base^(-2i / headDim). */
	private double[] rope(double[] x, int pos) {
		for (int hd = 0; hd < x.length / this.headDim; hd++) {
			for (int i = 0; i < this.headDim / 2; i++) {
				double angle = pos * Math.pow(this.base, -2.0 * i / this.headDim);
				int a = hd * this.headDim + 2 * i;
				double x0 = x[a];
				double x1 = x[a + 1];
				x[a] = x0 * Math.cos(angle) - x1 * Math.sin(angle);
				x[a + 1] = x0 * Math.sin(angle) + x1 * Math.cos(angle);
			}
		}
		return x;
	}

	private static double[] times(double[][] w, double[] x) {
		double[] out = new double[w.length];
		for (int r = 0; r < w.length; r++) {
			double sum = 0;
			for (int i = 0; i < x.length; i++) {
				sum += w[r][i] * x[i];
			}
			out[r] = sum;
		}
		return out;
	}

}
