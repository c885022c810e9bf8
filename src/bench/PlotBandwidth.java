import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.Shape;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.geom.Path2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
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

import javax.imageio.ImageIO;

import dev.nixl4j.json.JsonReader;

/**
 * Plots bandwidth against block size from the JSON files {@code src/bench/plot-bandwidth.sh}
 * writes: one line with markers per file, block size on a log2 axis, GB/s (10^9 B/s) on a log10
 * axis. Needs the JDK, headless, and nixl-core's classes for its JSON reader:
 *
 * <pre>
 * java -Djava.awt.headless=true -cp nixl-core/target/classes src/bench/PlotBandwidth.java docs/bench/bandwidth-*.json docs/bench/bandwidth.png
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

	private static final int LEFT = 90;

	private static final int RIGHT = 30;

	private static final int TOP = 80;

	private static final int BOTTOM = 70;

	private static final Color[] COLORS = { new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c),
			new Color(0xd62728), new Color(0x9467bd), new Color(0x8c564b) };

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
		ImageIO.write(render(series), "png", png.toFile());
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

	static BufferedImage render(List<Series> series) {
		BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
		Graphics2D g = image.createGraphics();
		g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
		g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
		g.setColor(Color.WHITE);
		g.fillRect(0, 0, WIDTH, HEIGHT);

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
		// Half a doubling of room either side, so that the end markers and labels stay inside.
		double smallest = log2(sizes.first());
		double xMin = smallest - 0.5;
		double xMax = log2(sizes.last()) + 0.5;
		double yMin = Math.floor(Math.log10(low));
		double yMax = Math.ceil(Math.log10(high));
		if (yMax == yMin) {
			yMax += 1;
		}
		Rectangle2D area = new Rectangle2D.Double(LEFT, TOP, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
		Axes axes = new Axes(area, xMin, xMax, yMin, yMax);

		Font small = new Font(Font.SANS_SERIF, Font.PLAIN, 13);
		Font label = new Font(Font.SANS_SERIF, Font.PLAIN, 15);
		Font title = new Font(Font.SANS_SERIF, Font.BOLD, 18);

		// Grid and y labels: 1, 2, 5 per decade.
		g.setFont(small);
		FontMetrics metrics = g.getFontMetrics();
		for (int decade = (int) yMin; decade < (int) yMax + 1; decade++) {
			for (int step : new int[] { 1, 2, 5 }) {
				double value = step * Math.pow(10, decade);
				double exponent = Math.log10(value);
				if (exponent > yMax + 1e-9) {
					continue;
				}
				double y = axes.y(exponent);
				g.setColor((step == 1) ? new Color(0xcccccc) : new Color(0xececec));
				g.draw(new Line2D.Double(area.getMinX(), y, area.getMaxX(), y));
				g.setColor(Color.DARK_GRAY);
				String text = number(value);
				g.drawString(text, (float) (area.getMinX() - 8 - metrics.stringWidth(text)),
						(float) (y + metrics.getAscent() / 2.0 - 1));
			}
		}
		// Grid per power of two, labels per power of four.
		for (long size = Long.highestOneBit(sizes.first()); size <= sizes.last(); size *= 2) {
			double exponent = log2(size);
			if (exponent < smallest) {
				continue;
			}
			double x = axes.x(exponent);
			boolean labelled = Math.round(exponent) % 2 == Math.round(smallest) % 2;
			g.setColor(labelled ? new Color(0xcccccc) : new Color(0xececec));
			g.draw(new Line2D.Double(x, area.getMinY(), x, area.getMaxY()));
			if (labelled) {
				g.setColor(Color.DARK_GRAY);
				String text = size(size);
				g.drawString(text, (float) (x - metrics.stringWidth(text) / 2.0), (float) (area.getMaxY() + 8 + metrics.getAscent()));
			}
		}
		g.setColor(Color.BLACK);
		g.setStroke(new BasicStroke(1.2f));
		g.draw(area);

		// Axis labels.
		g.setFont(label);
		metrics = g.getFontMetrics();
		String xLabel = "block size (bytes, log2 scale)";
		g.drawString(xLabel, (float) (area.getCenterX() - metrics.stringWidth(xLabel) / 2.0), HEIGHT - 18);
		String yLabel = "bandwidth (GB/s, 1 GB = 10^9 B, log scale)";
		Graphics2D rotated = (Graphics2D) g.create();
		rotated.rotate(-Math.PI / 2);
		rotated.drawString(yLabel, (float) (-area.getCenterY() - metrics.stringWidth(yLabel) / 2.0), 26f);
		rotated.dispose();

		// Title: what, where, when.
		g.setFont(title);
		metrics = g.getFontMetrics();
		String heading = "Bandwidth against block size, DRAM to DRAM";
		g.drawString(heading, (float) (WIDTH / 2.0 - metrics.stringWidth(heading) / 2.0), 30);
		g.setFont(label);
		metrics = g.getFontMetrics();
		String subtitle = machines(series) + "; data of " + dates(series) + "; load average " + loads(series);
		g.drawString(subtitle, (float) (WIDTH / 2.0 - metrics.stringWidth(subtitle) / 2.0), 56);

		// Lines and markers.
		for (int i = 0; i < series.size(); i++) {
			Series line = series.get(i);
			g.setColor(COLORS[i % COLORS.length]);
			g.setStroke(new BasicStroke(2.2f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
			Path2D path = new Path2D.Double();
			boolean first = true;
			for (Map.Entry<Long, Double> point : line.points().entrySet()) {
				double x = axes.x(log2(point.getKey()));
				double y = axes.y(Math.log10(point.getValue()));
				if (first) {
					path.moveTo(x, y);
					first = false;
				}
				else {
					path.lineTo(x, y);
				}
			}
			g.draw(path);
			for (Map.Entry<Long, Double> point : line.points().entrySet()) {
				g.fill(marker(i, axes.x(log2(point.getKey())), axes.y(Math.log10(point.getValue())), 5));
			}
		}

		// Legend, lower right (the slow small-block end of the lines is at the left).
		g.setFont(small);
		metrics = g.getFontMetrics();
		int rowHeight = metrics.getHeight() + 6;
		int legendWidth = 0;
		for (Series line : series) {
			legendWidth = Math.max(legendWidth, metrics.stringWidth(line.name()));
		}
		legendWidth += 60;
		int legendHeight = rowHeight * series.size() + 10;
		double legendX = area.getMaxX() - legendWidth - 12;
		double legendY = area.getMaxY() - legendHeight - 12;
		g.setColor(new Color(255, 255, 255, 235));
		g.fill(new Rectangle2D.Double(legendX, legendY, legendWidth, legendHeight));
		g.setColor(Color.GRAY);
		g.setStroke(new BasicStroke(1f));
		g.draw(new Rectangle2D.Double(legendX, legendY, legendWidth, legendHeight));
		for (int i = 0; i < series.size(); i++) {
			double y = legendY + 5 + rowHeight * (i + 0.5);
			g.setColor(COLORS[i % COLORS.length]);
			g.setStroke(new BasicStroke(2.2f));
			g.draw(new Line2D.Double(legendX + 10, y, legendX + 42, y));
			g.fill(marker(i, legendX + 26, y, 5));
			g.setColor(Color.BLACK);
			g.drawString(series.get(i).name(), (float) (legendX + 50), (float) (y + metrics.getAscent() / 2.0 - 1));
		}
		g.dispose();
		return image;
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

	private static Shape marker(int index, double x, double y, double r) {
		return switch (index % 4) {
			case 0 -> new Ellipse2D.Double(x - r, y - r, 2 * r, 2 * r);
			case 1 -> new Rectangle2D.Double(x - r * 0.9, y - r * 0.9, 1.8 * r, 1.8 * r);
			case 2 -> polygon(new double[] { x, x + r * 1.1, x - r * 1.1 }, new double[] { y - r * 1.2, y + r * 0.8, y + r * 0.8 });
			default -> polygon(new double[] { x, x + r * 1.2, x, x - r * 1.2 }, new double[] { y - r * 1.2, y, y + r * 1.2, y });
		};
	}

	private static Shape polygon(double[] xs, double[] ys) {
		Path2D path = new Path2D.Double();
		path.moveTo(xs[0], ys[0]);
		for (int i = 1; i < xs.length; i++) {
			path.lineTo(xs[i], ys[i]);
		}
		path.closePath();
		return path;
	}

	private static double log2(double value) {
		return Math.log(value) / Math.log(2);
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
	 * Maps log-scale values to pixels.
	 */
	record Axes(Rectangle2D area, double xMin, double xMax, double yMin, double yMax) {

		double x(double log2) {
			return this.area.getMinX() + (log2 - this.xMin) / (this.xMax - this.xMin) * this.area.getWidth();
		}

		double y(double log10) {
			return this.area.getMaxY() - (log10 - this.yMin) / (this.yMax - this.yMin) * this.area.getHeight();
		}

	}

}
