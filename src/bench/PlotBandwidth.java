import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

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
 * Plots bandwidth against block size from the JSON files {@code src/bench/plot-bandwidth.sh}
 * writes, with XChart: one line with markers per file, block size on a log2 axis, GB/s
 * (10^9 B/s) on a log10 axis labelled at 1-2-5 steps, the legend inside the plot at the
 * lower right. Needs XChart and nixl-core's classes (for its JSON reader), headless:
 *
 * <pre>
 * java -Djava.awt.headless=true -cp nixl-core/target/classes:xchart-3.8.8.jar src/bench/PlotBandwidth.java docs/bench/bandwidth-*.json docs/bench/bandwidth.png
 * </pre>
 *
 * Each input is an object with {@code series}, {@code date}, {@code machine} ({@code cpus},
 * {@code cpuModel}) and {@code data.results}, an array of {@code blockSize} and
 * {@code bandwidthGBps} (rows with an {@code op} other than {@code WRITE} are left out).
 */
public class PlotBandwidth {

	/** Every number as a double, which is what a plot needs. */
	private static final JsonReader JSON = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();

	private static final int WIDTH = 1200;

	private static final int HEIGHT = 760;

	private static final Color[] COLORS = { new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
			new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b) };

	private static final Marker[] MARKERS = { SeriesMarkers.CIRCLE, SeriesMarkers.SQUARE, SeriesMarkers.TRIANGLE_UP,
			SeriesMarkers.DIAMOND };

	private static final Color MAJOR_GRID = new Color(0xcccccc);

	private static final Color MINOR_GRID = new Color(0xececec);

	private static final Font TICK_LABELS = new Font(Font.SANS_SERIF, Font.PLAIN, 13);

	/**
	 * One line of the plot.
	 *
	 * @param name the legend text
	 * @param date when its data was taken (ISO-8601)
	 * @param machine the machine it ran on, in words
	 * @param loads the one-minute load averages before and after its run, as recorded
	 * @param points block size in bytes to bandwidth in GB/s, by size
	 */
	record Series(String name, String date, String machine, List<Double> loads, Map<Long, Double> points) {

		double median() {
			List<Double> values = this.points.values().stream().sorted().toList();
			return values.get(values.size() / 2);
		}

	}

	/**
	 * Reads the JSON files and writes the PNG.
	 * @param args the JSON files, then the PNG to write
	 * @throws IOException when a file cannot be read or written
	 */
	public static void main(String[] args) throws IOException {
		if (args.length < 2 || !args[args.length - 1].endsWith(".png")) {
			System.err.println("usage: java src/bench/PlotBandwidth.java SERIES.json... OUT.png");
			System.exit(2);
		}
		List<Series> series = new ArrayList<>();
		for (int i = 0; i < args.length - 1; i++) {
			series.add(read(Path.of(args[i])));
		}
		// Fastest first, so that the legend reads roughly as the lines lie.
		series.sort(Comparator.comparingDouble(Series::median).reversed());
		Path png = Path.of(args[args.length - 1]);
		try (OutputStream out = Files.newOutputStream(png)) {
			BitmapEncoder.saveBitmap(chart(series), out, BitmapFormat.PNG);
		}
		System.out.println("wrote " + png + " (" + series.size() + " series)");
	}

	@SuppressWarnings("unchecked")
	static Series read(Path file) throws IOException {
		Object parsed = JSON.read(Files.readString(file));
		if (!(parsed instanceof Map<?, ?> document) || !(document.get("series") instanceof String name)
				|| !(document.get("data") instanceof Map<?, ?> data)
				|| !(data.get("results") instanceof List<?> results)) {
			throw new IllegalArgumentException(file + ": not a series (needs \"series\" and \"data\".\"results\")");
		}
		Map<Long, Double> points = new LinkedHashMap<>();
		for (Object result : results) {
			Map<String, Object> row = (Map<String, Object>) result;
			if (row.get("op") instanceof String op && !op.equals("WRITE")) {
				continue;
			}
			if (row.get("blockSize") instanceof Double size && row.get("bandwidthGBps") instanceof Double gbps && gbps > 0) {
				points.put(size.longValue(), gbps);
			}
		}
		if (points.isEmpty()) {
			throw new IllegalArgumentException(file + ": no results with a blockSize and a positive bandwidthGBps");
		}
		String date = (document.get("date") instanceof String text) ? text : "unknown date";
		String machine = "unknown machine";
		if (document.get("machine") instanceof Map<?, ?> described) {
			machine = String.format(Locale.ROOT, "%s, nproc %.0f", described.get("cpuModel"), (Double) described.get("cpus"));
		}
		List<Double> loads = new ArrayList<>();
		for (String key : new String[] { "loadBefore", "loadAfter" }) {
			if (document.get(key) instanceof String text && !text.isBlank()) {
				loads.add(Double.valueOf(text.strip().split("\\s+")[0]));
			}
		}
		return new Series(name, date, machine, loads, points);
	}

	static XYChart chart(List<Series> series) {
		TreeSet<Long> sizes = new TreeSet<>();
		double low = Double.MAX_VALUE;
		double high = 0;
		for (Series line : series) {
			sizes.addAll(line.points().keySet());
			for (double value : line.points().values()) {
				low = Math.min(low, value);
				high = Math.max(high, value);
			}
		}
		XYChart chart = new XYChartBuilder().width(WIDTH)
			.height(HEIGHT)
			.title("Bandwidth against block size, DRAM to DRAM")
			.xAxisTitle("block size (bytes, log2 scale)")
			.yAxisTitle("bandwidth (GB/s, 1 GB = 10^9 B, log scale)")
			.build();
		XYStyler styler = chart.getStyler();
		styler.setChartBackgroundColor(Color.WHITE);
		styler.setPlotBackgroundColor(Color.WHITE);
		styler.setPlotBorderColor(Color.BLACK);
		styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
		// room under the title for the subtitle
		styler.setChartTitlePadding(26);
		styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
		styler.setAxisTickLabelsFont(TICK_LABELS);
		// both axes are labelled by TickLabels and gridded by series: XChart's own ticks are
		// evenly spaced (x) or at every digit (y), its labels are left transparent for their
		// room
		styler.setAxisTickLabelsColor(new Color(0, 0, 0, 0));
		styler.setAxisTicksMarksVisible(false);
		styler.setAxisTicksLineVisible(false);
		styler.setPlotTicksMarksVisible(false);
		styler.setPlotGridLinesVisible(false);
		// the axes' ranges span the whole plot, as the grid does
		styler.setPlotContentSize(1.0);
		styler.setMarkerSize(10);
		// the legend at the lower right, inside: the slow small-block ends of the lines are at
		// the left
		styler.setLegendPosition(LegendPosition.InsideSE);
		styler.setLegendLayout(LegendLayout.Vertical);
		styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
		styler.setLegendBackgroundColor(new Color(255, 255, 255, 235));
		styler.setLegendBorderColor(Color.GRAY);
		styler.setLegendSeriesLineLength(32);
		styler.setLegendPadding(8);

		// x: log2 of the size, a grid line per power of two, labels per power of four, half a
		// doubling of room either side so that the end markers stay inside
		Map<Double, String> xLabels = new LinkedHashMap<>();
		List<Double> xMinor = new ArrayList<>();
		long first = Long.highestOneBit(sizes.first());
		for (long size = first; size <= sizes.last(); size *= 2) {
			double exponent = Long.numberOfTrailingZeros(size);
			if ((Long.numberOfTrailingZeros(size) - Long.numberOfTrailingZeros(first)) % 2 == 0) {
				xLabels.put(exponent, size(size));
			}
			else {
				xMinor.add(exponent);
			}
		}
		double left = log2(sizes.first()) - 0.5;
		double right = log2(sizes.last()) + 0.5;
		styler.setXAxisMin(left);
		styler.setXAxisMax(right);
		// y: whole decades, labels at 1, 2 and 5 of each, grid lines at every digit
		int lowest = (int) Math.floor(Math.log10(low));
		int highest = Math.max((int) Math.ceil(Math.log10(high)), lowest + 1);
		Map<Double, String> yLabels = new LinkedHashMap<>();
		List<Double> yMinor = new ArrayList<>();
		for (int decade = lowest; decade <= highest; decade++) {
			for (int digit = 1; digit <= ((decade < highest) ? 9 : 1); digit++) {
				double value = digit * Math.pow(10, decade);
				if (digit == 1 || digit == 2 || digit == 5) {
					yLabels.put(value, number(value));
				}
				else {
					yMinor.add(value);
				}
			}
		}
		double bottom = Math.pow(10, lowest);
		double top = Math.pow(10, highest);
		styler.setYAxisLogarithmic(true);
		styler.setYAxisLogarithmicDecadeOnly(false);
		styler.setYAxisMin(bottom);
		styler.setYAxisMax(top);

		// the grid under the lines: minor first, major over it
		grid(chart, "minor grid", xMinor, yMinor, left, right, bottom, top, MINOR_GRID);
		grid(chart, "major grid", List.copyOf(xLabels.keySet()), List.copyOf(yLabels.keySet()), left, right, bottom,
				top, MAJOR_GRID);
		for (int i = 0; i < series.size(); i++) {
			Series line = series.get(i);
			XYSeries points = chart.addSeries(line.name(),
					line.points().keySet().stream().mapToDouble(PlotBandwidth::log2).toArray(),
					line.points().values().stream().mapToDouble(Double::doubleValue).toArray());
			points.setXYSeriesRenderStyle(XYSeriesRenderStyle.Line);
			points.setLineColor(COLORS[i % COLORS.length]);
			points.setMarkerColor(COLORS[i % COLORS.length]);
			points.setMarker(MARKERS[i % MARKERS.length]);
			points.setLineStyle(new BasicStroke(2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
		}
		chart.addAnnotation(new TickLabels(xLabels, yLabels));
		chart.addAnnotation(new Subtitle(machines(series) + "; data of " + dates(series) + "; load average "
				+ loads(series), new Font(Font.SANS_SERIF, Font.PLAIN, 15)));
		return chart;
	}

	private static double log2(long size) {
		return Math.log(size) / Math.log(2);
	}

	/**
	 * Adds grid lines as one series, under the series added after it: a vertical line at
	 * each x, a horizontal one at each y, broken apart by NaN.
	 */
	private static void grid(XYChart chart, String name, List<Double> xs, List<Double> ys, double left, double right,
			double bottom, double top, Color colour) {
		List<double[]> points = new ArrayList<>();
		for (double x : xs) {
			points.add(new double[] { x, bottom });
			points.add(new double[] { x, top });
			points.add(new double[] { x, Double.NaN });
		}
		for (double y : ys) {
			points.add(new double[] { left, y });
			points.add(new double[] { right, y });
			points.add(new double[] { right, Double.NaN });
		}
		if (points.isEmpty()) {
			return;
		}
		XYSeries grid = chart.addSeries(name, points.stream().mapToDouble((p) -> p[0]).toArray(),
				points.stream().mapToDouble((p) -> p[1]).toArray());
		grid.setXYSeriesRenderStyle(XYSeriesRenderStyle.Line);
		grid.setMarker(SeriesMarkers.NONE);
		grid.setLineColor(colour);
		grid.setLineStyle(new BasicStroke(1f));
		grid.setShowInLegend(false);
	}

	private static String loads(List<Series> series) {
		double low = Double.MAX_VALUE;
		double high = 0;
		for (Series line : series) {
			for (double load : line.loads()) {
				low = Math.min(low, load);
				high = Math.max(high, load);
			}
		}
		if (high == 0 && low == Double.MAX_VALUE) {
			return "not recorded";
		}
		return String.format(Locale.ROOT, (low == high) ? "%.2f" : "%.2f to %.2f", low, high);
	}

	private static String machines(List<Series> series) {
		TreeSet<String> machines = new TreeSet<>();
		series.forEach(line -> machines.add(line.machine()));
		return String.join(" / ", machines);
	}

	private static String dates(List<Series> series) {
		TreeSet<String> days = new TreeSet<>();
		series.forEach(line -> days.add(line.date().length() >= 10 ? line.date().substring(0, 10) : line.date()));
		return (days.size() == 1) ? days.first() : days.first() + " to " + days.last();
	}

	private static String size(long bytes) {
		String[] units = { "", "K", "M", "G", "T" };
		int unit = 0;
		long value = bytes;
		while (value >= 1024 && value % 1024 == 0 && unit < units.length - 1) {
			value /= 1024;
			unit++;
		}
		return value + units[unit];
	}

	private static String number(double value) {
		if (value >= 1) {
			return String.format(Locale.ROOT, "%.0f", value);
		}
		return String.format(Locale.ROOT, "%." + (int) Math.ceil(-Math.log10(value) - 1e-9) + "f", value);
	}

	/**
	 * The labels of both axes at the values given: under the plot for x, right-aligned left of
	 * it for y, where XChart's own (transparent) labels are; and the plot's border.
	 */
	static final class TickLabels extends Annotation {

		private final Map<Double, String> x;

		private final Map<Double, String> y;

		TickLabels(Map<Double, String> x, Map<Double, String> y) {
			super(false);
			this.x = x;
			this.y = y;
		}

		@Override
		public void paint(Graphics2D g) {
			XYStyler styler = (XYStyler) this.styler;
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setFont(TICK_LABELS);
			g.setColor(Color.BLACK);
			FontMetrics metrics = g.getFontMetrics();
			int gap = styler.getAxisTickPadding() + styler.getAxisTickMarkLength();
			double below = getYAxisScreenValueForMax() + styler.getPlotMargin() + gap + metrics.getAscent();
			this.x.forEach((value, text) -> g.drawString(text,
					(float) (this.chart.getScreenXFromChart(value) - metrics.stringWidth(text) / 2.0), (float) below));
			double leftOf = getXAxisScreenValueForMin() - styler.getPlotMargin() - gap;
			this.y.forEach((value, text) -> g.drawString(text, (float) (leftOf - metrics.stringWidth(text)),
					(float) (this.chart.getScreenYFromChart(value) + metrics.getAscent() / 2.0 - 1)));
			// the grid series end on the plot's border: drawn again over them
			g.setColor(styler.getPlotBorderColor());
			g.setStroke(new BasicStroke(1f));
			g.drawRect(getXAxisScreenValueForMin(), getYAxisScreenValueForMin(),
					getXAxisScreenValueForMax() - getXAxisScreenValueForMin(),
					getYAxisScreenValueForMax() - getYAxisScreenValueForMin());
		}

	}

	/** A line under the title, centred over the plot. */
	static final class Subtitle extends Annotation {

		private final String text;

		private final Font font;

		Subtitle(String text, Font font) {
			super(true);
			this.text = text;
			this.font = font;
		}

		@Override
		public void paint(Graphics2D g) {
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setFont(this.font);
			g.setColor(this.styler.getChartFontColor());
			double width = g.getFontMetrics().stringWidth(this.text);
			g.drawString(this.text, (float) ((getXAxisScreenValueForMin() + getXAxisScreenValueForMax() - width) / 2),
					getYAxisScreenValueForMin() - 10f);
		}

	}

}
