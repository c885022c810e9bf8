import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.Shape;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.DoubleFunction;

import dev.nixl4j.json.JsonReader;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYTitleAnnotation;
import org.jfree.chart.axis.AxisState;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.axis.TickType;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.chart.util.ShapeUtils;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * Plots bandwidth against block size from the JSON files {@code src/bench/plot-bandwidth.sh}
 * writes, with JFreeChart: one line with markers per file, block size on a log2 axis, GB/s
 * (10^9 B/s) on a log10 axis, the legend inside the plot at the lower right. Needs
 * JFreeChart and nixl-core's classes (for its JSON reader), headless:
 *
 * <pre>
 * java -Djava.awt.headless=true -cp nixl-core/target/classes:jfreechart-1.5.6.jar src/bench/PlotBandwidth.java docs/bench/bandwidth-*.json docs/bench/bandwidth.png
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

	private static final Shape[] MARKERS = { new Ellipse2D.Double(-5, -5, 10, 10),
			new Rectangle2D.Double(-4.5, -4.5, 9, 9), ShapeUtils.createUpTriangle(5.5f),
			ShapeUtils.createDiamond(6f) };

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
		ChartUtils.saveChartAsPNG(png.toFile(), chart(series), WIDTH, HEIGHT);
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

	static JFreeChart chart(List<Series> series) {
		XYSeriesCollection dataset = new XYSeriesCollection();
		XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
		renderer.setLegendLine(new Line2D.Double(-16, 0, 16, 0));
		TreeSet<Long> sizes = new TreeSet<>();
		double low = Double.MAX_VALUE;
		double high = 0;
		for (int i = 0; i < series.size(); i++) {
			Series line = series.get(i);
			XYSeries points = new XYSeries(line.name(), false);
			line.points().forEach((size, gbps) -> points.add(size.doubleValue(), gbps.doubleValue()));
			dataset.addSeries(points);
			renderer.setSeriesPaint(i, COLORS[i % COLORS.length]);
			renderer.setSeriesShape(i, MARKERS[i % MARKERS.length]);
			renderer.setSeriesStroke(i, new BasicStroke(2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
			sizes.addAll(line.points().keySet());
			for (double value : line.points().values()) {
				low = Math.min(low, value);
				high = Math.max(high, value);
			}
		}
		// x: a grid line per power of two, labels per power of four, half a doubling of room
		// either side so that the end markers stay inside
		List<Double> labelled = new ArrayList<>();
		List<Double> unlabelled = new ArrayList<>();
		for (long size = Long.highestOneBit(sizes.first()); size <= sizes.last(); size *= 2) {
			(((Long.numberOfTrailingZeros(size) - Long.numberOfTrailingZeros(Long.highestOneBit(sizes.first()))) % 2 == 0) ? labelled
					: unlabelled)
				.add((double) size);
		}
		LogAxis blockSize = new TickedLogAxis("block size (bytes, log2 scale)", 2, labelled, unlabelled,
				(value) -> size((long) value));
		blockSize.setRange(sizes.first() / Math.sqrt(2), sizes.last() * Math.sqrt(2));
		// y: whole decades, labels at 1, 2 and 5 of each, grid lines at every digit
		int lowest = (int) Math.floor(Math.log10(low));
		int highest = Math.max((int) Math.ceil(Math.log10(high)), lowest + 1);
		labelled = new ArrayList<>();
		unlabelled = new ArrayList<>();
		for (int decade = lowest; decade <= highest; decade++) {
			for (int digit = 1; digit <= ((decade < highest) ? 9 : 1); digit++) {
				((digit == 1 || digit == 2 || digit == 5) ? labelled : unlabelled).add(digit * Math.pow(10, decade));
			}
		}
		LogAxis bandwidth = new TickedLogAxis("bandwidth (GB/s, 1 GB = 10^9 B, log scale)", 10, labelled, unlabelled,
				PlotBandwidth::number);
		bandwidth.setRange(Math.pow(10, lowest), Math.pow(10, highest));

		XYPlot plot = new XYPlot(dataset, blockSize, bandwidth, renderer);
		plot.setBackgroundPaint(Color.WHITE);
		plot.setOutlinePaint(Color.BLACK);
		plot.setOutlineStroke(new BasicStroke(1.2f));
		plot.setDomainGridlinePaint(new Color(0xcccccc));
		plot.setRangeGridlinePaint(new Color(0xcccccc));
		plot.setDomainMinorGridlinesVisible(true);
		plot.setRangeMinorGridlinesVisible(true);
		plot.setDomainMinorGridlinePaint(new Color(0xececec));
		plot.setRangeMinorGridlinePaint(new Color(0xececec));
		BasicStroke grid = new BasicStroke(1f);
		plot.setDomainGridlineStroke(grid);
		plot.setRangeGridlineStroke(grid);
		plot.setDomainMinorGridlineStroke(grid);
		plot.setRangeMinorGridlineStroke(grid);
		// the legend at the lower right, inside: the slow small-block ends of the lines are at
		// the left
		LegendTitle legend = new LegendTitle(plot);
		legend.setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
		legend.setBackgroundPaint(new Color(255, 255, 255, 235));
		legend.setFrame(new BlockBorder(Color.GRAY));
		legend.setPadding(new RectangleInsets(4, 8, 4, 8));
		legend.setItemLabelPadding(new RectangleInsets(3, 6, 3, 6));
		legend.setPosition(RectangleEdge.RIGHT);
		plot.addAnnotation(new XYTitleAnnotation(relative(blockSize, 0.985), relative(bandwidth, 0.015), legend,
				RectangleAnchor.BOTTOM_RIGHT));

		JFreeChart chart = new JFreeChart("Bandwidth against block size, DRAM to DRAM",
				new Font(Font.SANS_SERIF, Font.BOLD, 18), plot, false);
		chart.setBackgroundPaint(Color.WHITE);
		chart.addSubtitle(new TextTitle(machines(series) + "; data of " + dates(series) + "; load average "
				+ loads(series), new Font(Font.SANS_SERIF, Font.PLAIN, 15)));
		return chart;
	}

	/**
	 * Returns the fraction of an axis's value range that lies at a fraction of its length:
	 * an annotation's relative coordinates are linear in value, the axis is not.
	 */
	private static double relative(LogAxis axis, double fraction) {
		double lower = axis.getLowerBound();
		double upper = axis.getUpperBound();
		double value = axis.calculateValue(axis.calculateLog(lower)
				+ fraction * (axis.calculateLog(upper) - axis.calculateLog(lower)));
		return (value - lower) / (upper - lower);
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
	 * A log axis with the ticks it is given: labelled ones (major grid lines) and unlabelled
	 * ones (minor grid lines).
	 */
	static final class TickedLogAxis extends LogAxis {

		private final List<Double> labelled;

		private final List<Double> unlabelled;

		private final DoubleFunction<String> label;

		TickedLogAxis(String name, double base, List<Double> labelled, List<Double> unlabelled,
				DoubleFunction<String> label) {
			super(name);
			setBase(base);
			setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 15));
			setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
			setMinorTickMarksVisible(false);
			this.labelled = labelled;
			this.unlabelled = unlabelled;
			this.label = label;
		}

		@Override
		public List refreshTicks(Graphics2D g2, AxisState state, Rectangle2D dataArea, RectangleEdge edge) {
			boolean horizontal = RectangleEdge.isTopOrBottom(edge);
			TextAnchor anchor = horizontal ? TextAnchor.TOP_CENTER : TextAnchor.CENTER_RIGHT;
			List<NumberTick> ticks = new ArrayList<>();
			for (double value : this.labelled) {
				ticks.add(new NumberTick(TickType.MAJOR, value, this.label.apply(value), anchor, TextAnchor.CENTER, 0));
			}
			for (double value : this.unlabelled) {
				ticks.add(new NumberTick(TickType.MINOR, value, "", anchor, TextAnchor.CENTER, 0));
			}
			return ticks;
		}

	}

}
