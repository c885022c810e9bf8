import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.nixl4j.json.JsonReader;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.XYSeries.XYSeriesRenderStyle;
import org.knowm.xchart.internal.chartpart.Annotation;
import org.knowm.xchart.style.Styler.LegendLayout;
import org.knowm.xchart.style.Styler.LegendPosition;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.Marker;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Plots KV pull latency against load from the JSON files {@code src/bench/plot-kv-load.sh}
 * writes, one per run of {@code nixl4j kv-bench --consumers N --in-flight K}: p50 (solid)
 * and p99 (dashed) latency against the run's aggregate GB/s (10^9 B/s), one colour per
 * consumer count, each point labelled with its requests in flight, latency on a log axis
 * labelled at 1-2-5 steps. Prints the same figures as a markdown table. Needs XChart and
 * nixl-core's classes (for its JSON reader), headless:
 *
 * <pre>
 * java -Djava.awt.headless=true -cp nixl-core/target/classes:xchart-3.8.8.jar src/bench/PlotKvLoad.java docs/bench/kv-load-*.json docs/bench/kv-load.png
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

	private static final Marker[] MARKERS = { SeriesMarkers.SQUARE, SeriesMarkers.CIRCLE, SeriesMarkers.TRIANGLE_UP,
			SeriesMarkers.DIAMOND, SeriesMarkers.TRIANGLE_DOWN, SeriesMarkers.RECTANGLE };

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
		try (OutputStream out = Files.newOutputStream(output)) {
			BitmapEncoder.saveBitmap(chart(runs), out, BitmapFormat.PNG);
		}
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

	private static XYChart chart(List<Run> runs) {
		Run first = runs.getFirst();
		XYChart chart = new XYChartBuilder().width(1200)
			.height(760)
			.title("KV pull latency against load: consumer processes x requests in flight")
			.xAxisTitle("aggregate bandwidth (GB/s, 10^9 B/s)")
			.yAxisTitle("latency per request (ms, log scale)")
			.build();
		XYStyler styler = chart.getStyler();
		styler.setChartBackgroundColor(Color.WHITE);
		styler.setPlotBackgroundColor(Color.WHITE);
		styler.setPlotBorderColor(Color.GRAY);
		styler.setPlotGridLinesColor(new Color(0xdddddd));
		styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
		// room under the title for the subtitle
		styler.setChartTitlePadding(24);
		styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
		styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
		styler.setLegendPosition(LegendPosition.OutsideS);
		styler.setLegendLayout(LegendLayout.Horizontal);
		styler.setLegendBorderColor(Color.GRAY);
		styler.setMarkerSize(7);
		styler.setXAxisDecimalPattern("0.00");
		styler.setAxisTicksLineVisible(false);
		styler.setPlotTicksMarksVisible(false);

		Map<Integer, List<Run>> byConsumers = new TreeMap<>();
		runs.forEach((run) -> byConsumers.computeIfAbsent(run.consumers(), (c) -> new ArrayList<>()).add(run));
		List<Label> labels = new ArrayList<>();
		int colour = 0;
		for (Map.Entry<Integer, List<Run>> entry : byConsumers.entrySet()) {
			String consumers = entry.getKey() + ((entry.getKey() == 1) ? " consumer" : " consumers");
			List<Run> line = entry.getValue();
			Color paint = COLORS[colour % COLORS.length];
			double[] gbps = line.stream().mapToDouble(Run::gbps).toArray();
			XYSeries p50 = chart.addSeries(consumers + ", p50", gbps, line.stream().mapToDouble(Run::p50Ms).toArray());
			XYSeries p99 = chart.addSeries(consumers + ", p99", gbps, line.stream().mapToDouble(Run::p99Ms).toArray());
			for (XYSeries series : List.of(p50, p99)) {
				series.setXYSeriesRenderStyle(XYSeriesRenderStyle.Line);
				series.setLineColor(paint);
				series.setMarkerColor(paint);
			}
			p50.setLineStyle(SOLID);
			p99.setLineStyle(DASHED);
			p50.setMarker(MARKERS[(2 * colour) % MARKERS.length]);
			p99.setMarker(MARKERS[(2 * colour + 1) % MARKERS.length]);
			line.forEach((run) -> labels.add(new Label(" " + run.inFlight() + " in flight", run.gbps(), run.p50Ms(), paint)));
			colour++;
		}
		// latency: XChart's log axis, grid lines at every digit, labelled at 1-2-5 steps by
		// Labels (XChart labels every digit or only the decades)
		double low = runs.stream().mapToDouble(Run::p50Ms).min().orElse(1);
		double high = runs.stream().mapToDouble(Run::p99Ms).max().orElse(1000);
		List<Double> steps = new ArrayList<>();
		for (int decade = (int) Math.floor(Math.log10(low)); decade <= (int) Math.ceil(Math.log10(high)); decade++) {
			for (int digit : new int[] { 1, 2, 5 }) {
				steps.add(digit * Math.pow(10, decade));
			}
		}
		double lower = steps.stream().filter((v) -> v <= low * (1 + 1e-9)).max(Double::compare).orElse(low);
		double upper = steps.stream().filter((v) -> v >= high * (1 - 1e-9)).min(Double::compare).orElse(high);
		styler.setYAxisLogarithmic(true);
		styler.setYAxisLogarithmicDecadeOnly(false);
		styler.setYAxisMin(lower);
		styler.setYAxisMax(upper);
		styler.setYAxisTickLabelsColor(new Color(0, 0, 0, 0));
		chart.addAnnotation(new Labels(steps.stream().filter((v) -> v >= lower && v <= upper).toList(), labels,
				String.format(Locale.ROOT,
						"nixl4j kv-bench, %s engine, %d blocks (%d MiB) per request, one producer; %s; %s; load before %s",
						first.engine().toLowerCase(Locale.ROOT), first.blocks(), first.blocks() * 2, first.machine(),
						first.date(), first.load())));
		return chart;
	}

	/** A point's label, in its series's colour. */
	record Label(String text, double x, double y, Color colour) {
	}

	/**
	 * The latency axis's labels at 1-2-5 steps, right-aligned left of the plot where XChart's
	 * own (transparent) labels are; each point's label below its right; the subtitle under
	 * the title.
	 */
	static final class Labels extends Annotation {

		private final List<Double> steps;

		private final List<Label> points;

		private final String subtitle;

		Labels(List<Double> steps, List<Label> points, String subtitle) {
			super(false);
			this.steps = steps;
			this.points = points;
			this.subtitle = subtitle;
		}

		@Override
		public void paint(Graphics2D g) {
			XYStyler styler = (XYStyler) this.styler;
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setFont(styler.getAxisTickLabelsFont());
			g.setColor(styler.getAxisTickLabelsColor());
			FontMetrics metrics = g.getFontMetrics();
			double right = getXAxisScreenValueForMin() - styler.getPlotMargin() - styler.getAxisTickMarkLength()
					- styler.getAxisTickPadding();
			for (double value : this.steps) {
				String text = BigDecimal.valueOf(value).round(new MathContext(1)).stripTrailingZeros().toPlainString();
				g.drawString(text, (float) (right - metrics.stringWidth(text)),
						(float) (this.chart.getScreenYFromChart(value) + metrics.getAscent() / 2.0 - 1));
			}
			g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
			metrics = g.getFontMetrics();
			for (Label label : this.points) {
				g.setColor(label.colour());
				g.drawString(label.text(), (float) this.chart.getScreenXFromChart(label.x()) + 2,
						(float) this.chart.getScreenYFromChart(label.y()) + metrics.getAscent() + 2);
			}
			g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
			g.setColor(styler.getChartFontColor());
			double width = g.getFontMetrics().stringWidth(this.subtitle);
			g.drawString(this.subtitle,
					(float) ((getXAxisScreenValueForMin() + getXAxisScreenValueForMax() - width) / 2),
					getYAxisScreenValueForMin() - 8f);
		}

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
