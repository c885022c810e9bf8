import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.nixl4j.json.JsonReader;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTextAnnotation;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Plots KV pull latency against load from the JSON files {@code src/bench/plot-kv-load.sh}
 * writes, one per run of {@code nixl4j kv-bench --consumers N --in-flight K}: p50 (solid)
 * and p99 (dashed) latency against the run's aggregate GB/s (10^9 B/s), one colour per
 * consumer count, each point labelled with its requests in flight. Prints the same figures
 * as a markdown table. Needs JFreeChart and nixl-core's classes (for its JSON reader),
 * headless:
 *
 * <pre>
 * java -Djava.awt.headless=true -cp nixl-core/target/classes:jfreechart-1.5.6.jar src/bench/PlotKvLoad.java docs/bench/kv-load-*.json docs/bench/kv-load.png
 * </pre>
 *
 * Each input is an object with {@code series}, {@code date}, {@code machine} ({@code cpus},
 * {@code cpuModel}), {@code loadBefore} and {@code data}, kv-bench's JSON document.
 */
public class PlotKvLoad {

	/** Every number as a double, which is what a plot needs. */
	private static final JsonReader JSON = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();

	private static final Color[] COLORS = { new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
			new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b) };

	private static final BasicStroke SOLID = new BasicStroke(2f);

	private static final BasicStroke DASHED = new BasicStroke(2f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_ROUND, 1f,
			new float[] { 7f, 5f }, 0f);

	record Run(int consumers, int inFlight, int blocks, int requests, double gbps, double p50Ms, double p99Ms,
			int verified, int posted, String engine, String date, String machine, String load) {
	}

	public static void main(String[] args) throws IOException {
		if (args.length < 2) {
			System.err.println("usage: PlotKvLoad INPUT.json... OUTPUT.png");
			System.exit(2);
		}
		List<Run> runs = new ArrayList<>();
		for (int i = 0; i < args.length - 1; i++) {
			runs.add(read(Path.of(args[i])));
		}
		runs.sort(Comparator.comparingInt(Run::consumers).thenComparingInt(Run::inFlight));
		Path output = Path.of(args[args.length - 1]);
		ChartUtils.saveChartAsPNG(output.toFile(), chart(runs), 1200, 760);
		System.out.println(table(runs));
		System.out.println("wrote " + output);
	}

	@SuppressWarnings("unchecked")
	private static Run read(Path file) throws IOException {
		Map<String, Object> envelope = (Map<String, Object>) JSON.read(Files.readString(file));
		Map<String, Object> machine = (Map<String, Object>) envelope.get("machine");
		Map<String, Object> data = (Map<String, Object>) envelope.get("data");
		return new Run(count(data, "consumers"), count(data, "inFlight"), count(data, "blocksPerRequest"),
				count(data, "timedRequests"), number(data, "aggregateBandwidthGBps"), number(data, "p50LatencyUs") / 1000,
				number(data, "p99LatencyUs") / 1000, count(data, "verifiedRequests"), count(data, "postedRequests"),
				String.valueOf(data.get("engine")), String.valueOf(envelope.get("date")),
				count(machine, "cpus") + " cores, " + machine.get("cpuModel"), String.valueOf(envelope.get("loadBefore")));
	}

	private static double number(Map<String, Object> object, String name) {
		if (!(object.get(name) instanceof Double value)) {
			throw new IllegalArgumentException("no number '" + name + "' in " + object.keySet());
		}
		return value;
	}

	private static int count(Map<String, Object> object, String name) {
		return (int) number(object, name);
	}

	private static JFreeChart chart(List<Run> runs) {
		Map<Integer, List<Run>> byConsumers = new TreeMap<>();
		runs.forEach((run) -> byConsumers.computeIfAbsent(run.consumers(), (c) -> new ArrayList<>()).add(run));
		XYSeriesCollection dataset = new XYSeriesCollection();
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
		LogarithmicAxis latency = new LogarithmicAxis("latency per request (ms, log scale)");
		latency.setExpTickLabelsFlag(false);
		latency.setLog10TickLabelsFlag(false);
		XYPlot plot = new XYPlot(dataset, new NumberAxis("aggregate bandwidth (GB/s, 10^9 B/s)"), latency, renderer);
		int colour = 0;
		for (Map.Entry<Integer, List<Run>> entry : byConsumers.entrySet()) {
			String consumers = entry.getKey() + ((entry.getKey() == 1) ? " consumer" : " consumers");
			XYSeries p50 = new XYSeries(consumers + ", p50", false);
			XYSeries p99 = new XYSeries(consumers + ", p99", false);
			for (Run run : entry.getValue()) {
				p50.add(run.gbps(), run.p50Ms());
				p99.add(run.gbps(), run.p99Ms());
				XYTextAnnotation label = new XYTextAnnotation(" " + run.inFlight() + " in flight", run.gbps(),
						run.p50Ms());
				label.setTextAnchor(TextAnchor.TOP_LEFT);
				label.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
				label.setPaint(COLORS[colour % COLORS.length]);
				plot.addAnnotation(label);
			}
			Color paint = COLORS[colour % COLORS.length];
			int index = dataset.getSeriesCount();
			dataset.addSeries(p50);
			dataset.addSeries(p99);
			renderer.setSeriesPaint(index, paint);
			renderer.setSeriesStroke(index, SOLID);
			renderer.setSeriesPaint(index + 1, paint);
			renderer.setSeriesStroke(index + 1, DASHED);
			colour++;
		}
		plot.setBackgroundPaint(Color.WHITE);
		plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
		plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
		((NumberAxis) plot.getDomainAxis()).setAutoRangeIncludesZero(false);
		Run first = runs.getFirst();
		JFreeChart chart = new JFreeChart("KV pull latency against load: consumer processes x requests in flight",
				new Font(Font.SANS_SERIF, Font.BOLD, 18), plot, true);
		chart.setBackgroundPaint(Color.WHITE);
		chart.addSubtitle(new TextTitle(String.format(Locale.ROOT,
				"nixl4j kv-bench, %s engine, %d blocks (%d MiB) per request, one producer; %s; %s; load before %s",
				first.engine().toLowerCase(Locale.ROOT), first.blocks(), first.blocks() * 2, first.machine(),
				first.date(), first.load()), new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
		return chart;
	}

	private static String table(List<Run> runs) {
		StringBuilder table = new StringBuilder();
		table.append("| Consumers | In flight | Timed requests | Aggregate GB/s | p50 (ms) | p99 (ms) | Verified |\n");
		table.append("|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Run run : runs) {
			table.append(String.format(Locale.ROOT, "| %d | %d | %d | %.3f | %.2f | %.2f | %d/%d |%n", run.consumers(),
					run.inFlight(), run.requests(), run.gbps(), run.p50Ms(), run.p99Ms(), run.verified(),
					run.posted()));
		}
		return table.toString().stripTrailing();
	}

}
