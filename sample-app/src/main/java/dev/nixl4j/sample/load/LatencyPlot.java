package dev.nixl4j.sample.load;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.Shape;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.AxisState;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.axis.TickType;
import org.jfree.chart.axis.ValueTick;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.chart.util.ShapeUtils;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Draws a load run's latency against time with JFreeChart: each request's latency as the
 * client saw it and its transfer latency (READ of all blocks and lease confirmation) as
 * points at the time its answer came, a rolling p50 (solid) and p99 (dashed) of each over
 * the last requests, failed requests as red crosses, latency on a log axis.
 */
public final class LatencyPlot {

	/** Width of the PNG in pixels. */
	public static final int WIDTH = 1200;

	/** Height of the PNG in pixels. */
	public static final int HEIGHT = 700;

	/** Points per series at most; a longer run plots every n-th request. */
	static final int MAX_POINTS = 20_000;

	private static final Color REQUEST = new Color(0x1f77b4);

	private static final Color TRANSFER = new Color(0xff7f0e);

	private static final Color FAILED = new Color(0xd62728);

	private static final BasicStroke SOLID = new BasicStroke(2f);

	private static final BasicStroke DASHED = new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 1f,
			new float[] { 7f, 5f }, 0f);

	static {
		// drawn off screen: a load generator's machine need not have a display
		if (System.getProperty("java.awt.headless") == null) {
			System.setProperty("java.awt.headless", "true");
		}
	}

	private LatencyPlot() {
	}

	/**
	 * Writes the PNG of a run.
	 * @param report the run
	 * @param png the file to write (replaced when it exists)
	 * @throws IOException when the file cannot be written
	 */
	public static void write(LoadReport report, Path png) throws IOException {
		ChartUtils.saveChartAsPNG(png.toFile(), chart(report), WIDTH, HEIGHT);
	}

	/**
	 * Returns the chart of a run.
	 * @param report the run
	 * @return the chart
	 */
	public static JFreeChart chart(LoadReport report) {
		List<RequestResult> done = new ArrayList<>(report.results());
		done.sort(Comparator.comparingLong(RequestResult::doneNanos));
		List<RequestResult> ok = done.stream().filter(RequestResult::ok).toList();
		int window = window(ok.size());
		int stride = Math.max(1, Math.ceilDiv(done.size(), MAX_POINTS));

		XYSeriesCollection dataset = new XYSeriesCollection();
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer();
		Ellipse2D dot = new Ellipse2D.Double(-2.5, -2.5, 5, 5);
		addPoints(dataset, renderer, "request latency (client)", report, ok, stride, (r) -> r.nanos() / 1e6, REQUEST,
				dot);
		addPoints(dataset, renderer, "transfer latency", report, ok, stride, LatencyPlot::transfer, TRANSFER, dot);
		String last = "last " + window + ((window == 1) ? " request" : " requests");
		addRolling(dataset, renderer, "request p50, " + last, report, ok, window, stride, (r) -> r.nanos() / 1e6, 0.50,
				REQUEST, SOLID);
		addRolling(dataset, renderer, "request p99, " + last, report, ok, window, stride, (r) -> r.nanos() / 1e6, 0.99,
				REQUEST, DASHED);
		addRolling(dataset, renderer, "transfer p50, " + last, report, ok, window, stride, LatencyPlot::transfer, 0.50,
				TRANSFER, SOLID);
		addRolling(dataset, renderer, "transfer p99, " + last, report, ok, window, stride, LatencyPlot::transfer, 0.99,
				TRANSFER, DASHED);
		List<RequestResult> failed = done.stream().filter((r) -> !r.ok()).toList();
		if (!failed.isEmpty()) {
			addPoints(dataset, renderer, "failed (latency until the failure)", report, failed, stride,
					(r) -> r.nanos() / 1e6, FAILED, ShapeUtils.createDiagonalCross(4f, 1f));
		}

		LogAxis latency = latencyAxis(dataset);
		NumberAxis time = new NumberAxis("time since the start of the timed requests (s), when the answer came");
		XYPlot plot = new XYPlot(dataset, time, latency, renderer);
		plot.setBackgroundPaint(Color.WHITE);
		plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
		plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
		plot.setRangeMinorGridlinesVisible(true);
		JFreeChart chart = new JFreeChart("Latency over the load run", new Font(Font.SANS_SERIF, Font.BOLD, 18), plot,
				true);
		chart.setBackgroundPaint(Color.WHITE);
		chart.addSubtitle(new TextTitle(subtitle(report, stride), new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
		return chart;
	}

	/** Requests per rolling percentile: an eighth of the run, 5 to 100. */
	static int window(int requests) {
		return Math.clamp(requests / 8, Math.min(5, requests), 100);
	}

	/**
	 * Returns a log axis that spans the values from the 1-2-5 step below the lowest to
	 * the one above the highest, labelled at each step, with grid lines at every digit.
	 */
	private static LogAxis latencyAxis(XYSeriesCollection dataset) {
		double low = Double.MAX_VALUE;
		double high = 0;
		for (int i = 0; i < dataset.getSeriesCount(); i++) {
			if (dataset.getSeries(i).getItemCount() > 0) {
				low = Math.min(low, dataset.getSeries(i).getMinY());
				high = Math.max(high, dataset.getSeries(i).getMaxY());
			}
		}
		if (high == 0) {
			low = 1;
			high = 1000;
		}
		List<Double> steps = new ArrayList<>();
		List<Double> digits = new ArrayList<>();
		for (int decade = (int) Math.floor(Math.log10(low)); decade <= (int) Math.ceil(Math.log10(high)); decade++) {
			for (int digit = 1; digit <= 9; digit++) {
				double value = digit * Math.pow(10, decade);
				((digit == 1 || digit == 2 || digit == 5) ? steps : digits).add(value);
			}
		}
		double lowest = low;
		double highest = high;
		double lower = steps.stream().filter((v) -> v <= lowest * (1 + 1e-9)).max(Double::compare).orElse(low);
		double upper = steps.stream().filter((v) -> v >= highest * (1 - 1e-9)).min(Double::compare).orElse(high);
		LogAxis axis = new LogAxis("latency (ms, log scale)") {

			@Override
			public List<ValueTick> refreshTicks(Graphics2D g2, AxisState state, Rectangle2D dataArea,
					RectangleEdge edge) {
				List<ValueTick> ticks = new ArrayList<>();
				for (double value : steps) {
					if (value >= lower && value <= upper) {
						ticks.add(new NumberTick(TickType.MAJOR, value, label(value), TextAnchor.CENTER_RIGHT,
								TextAnchor.CENTER, 0));
					}
				}
				for (double value : digits) {
					if (value > lower && value < upper) {
						ticks.add(new NumberTick(TickType.MINOR, value, "", TextAnchor.CENTER_RIGHT, TextAnchor.CENTER,
								0));
					}
				}
				return ticks;
			}

		};
		axis.setRange((upper > lower) ? lower : lower / 2, (upper > lower) ? upper : upper * 2);
		return axis;
	}

	/** A step of the latency axis: 0.05, 0.1, 2, 50, 1000. */
	private static String label(double value) {
		return BigDecimal.valueOf(value).round(new MathContext(1)).stripTrailingZeros().toPlainString();
	}

	private static double transfer(RequestResult result) {
		GenerateResponse answer = result.answer();
		return (answer != null) ? answer.timings().transfer() : Double.NaN;
	}

	private static void addPoints(XYSeriesCollection dataset, XYLineAndShapeRenderer renderer, String name,
			LoadReport report, List<RequestResult> results, int stride, ToDoubleFunction<RequestResult> millis,
			Color colour, Shape shape) {
		XYSeries series = new XYSeries(name, false, true);
		for (int i = 0; i < results.size(); i += stride) {
			double value = millis.applyAsDouble(results.get(i));
			// a log axis has no place for zero
			if (value > 0) {
				series.add(report.secondsSinceStart(results.get(i)), value);
			}
		}
		int index = dataset.getSeriesCount();
		dataset.addSeries(series);
		renderer.setSeriesLinesVisible(index, false);
		renderer.setSeriesShapesVisible(index, true);
		renderer.setSeriesShape(index, shape);
		renderer.setSeriesPaint(index,
				new Color(colour.getRed(), colour.getGreen(), colour.getBlue(), (colour == FAILED) ? 255 : 110));
	}

	private static void addRolling(XYSeriesCollection dataset, XYLineAndShapeRenderer renderer, String name,
			LoadReport report, List<RequestResult> ok, int window, int stride, ToDoubleFunction<RequestResult> millis,
			double fraction, Color colour, BasicStroke stroke) {
		XYSeries series = new XYSeries(name, false, true);
		double[] values = ok.stream().mapToDouble(millis).toArray();
		for (int end = window; end <= values.length; end += stride) {
			double[] last = Arrays.copyOfRange(values, end - window, end);
			double value = LoadReport.nearestRank(last, fraction);
			if (value > 0) {
				series.add(report.secondsSinceStart(ok.get(end - 1)), value);
			}
		}
		int index = dataset.getSeriesCount();
		dataset.addSeries(series);
		renderer.setSeriesLinesVisible(index, true);
		renderer.setSeriesShapesVisible(index, false);
		renderer.setSeriesPaint(index, colour);
		renderer.setSeriesStroke(index, stroke);
	}

	private static String subtitle(LoadReport report, int stride) {
		LoadOptions options = report.options();
		List<GenerateResponse> answers = report.answers();
		// the engine without where its library came from
		String engine = answers.isEmpty() ? "no answers" : answers.getFirst().engine().replaceFirst(" \\(.*", "");
		return String.format(Locale.ROOT,
				"nixl4j sample, %s; %d requests (%d failed), concurrency %d, prompts of %d to %d tokens; "
						+ "request p50 %.1f ms, p99 %.1f ms; transfer p50 %.1f ms, p99 %.1f ms%s",
				engine, report.results().size(), report.failed().size(), options.concurrency(),
				Math.max(1, options.promptTokens() - 15), options.promptTokens(), report.clientPercentile(0.50),
				report.clientPercentile(0.99), report.percentile((a) -> a.timings().transfer(), 0.50),
				report.percentile((a) -> a.timings().transfer(), 0.99),
				(stride > 1) ? "; every " + stride + "th request drawn" : "");
	}

}
