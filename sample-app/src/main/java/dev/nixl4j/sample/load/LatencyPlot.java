package dev.nixl4j.sample.load;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Line2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import java.util.stream.DoubleStream;

import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
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
 * Draws a load run's latency against time with XChart: each request's latency as the
 * client saw it and its transfer latency (READ of all blocks and lease confirmation) as
 * points at the time its answer came, a rolling p50 (solid) and p99 (dashed) of each over
 * the last requests, failed requests as red crosses, latency on a log axis labelled at
 * 1-2-5 steps.
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

	private static final Font SUBTITLE = new Font(Font.SANS_SERIF, Font.PLAIN, 12);

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
		try (OutputStream out = Files.newOutputStream(png)) {
			BitmapEncoder.saveBitmap(chart(report), out, BitmapFormat.PNG);
		}
	}

	/**
	 * Returns the chart of a run, {@link #WIDTH} by {@link #HEIGHT} pixels. Its first
	 * series, {@code grid}, left out of the legend, draws the grid lines of the latency
	 * axis; that axis's labels and the subtitle are annotations.
	 * @param report the run
	 * @return the chart
	 */
	public static XYChart chart(LoadReport report) {
		List<RequestResult> done = new ArrayList<>(report.results());
		done.sort(Comparator.comparingLong(RequestResult::doneNanos));
		List<RequestResult> ok = done.stream().filter(RequestResult::ok).toList();
		int window = window(ok.size());
		int stride = Math.max(1, Math.ceilDiv(done.size(), MAX_POINTS));

		XYChart chart = new XYChartBuilder().width(WIDTH)
			.height(HEIGHT)
			.title("Latency over the load run")
			.xAxisTitle("time since the start of the timed requests (s), when the answer came")
			.yAxisTitle("latency (ms, log scale)")
			.build();
		style(chart);
		// seconds from the start, a margin either side: XChart labels no tick on a border
		double end = done.stream().mapToDouble(report::secondsSinceStart).max().orElse(0);
		double margin = (end > 0) ? end * 0.01 : 0.01;
		double left = -margin;
		double right = end + 2 * margin;
		chart.getStyler().setXAxisMin(left);
		chart.getStyler().setXAxisMax(right);
		List<Double> steps = latencyAxis(chart, done);
		chart.addAnnotation(new Subtitle(subtitle(report, stride)));
		// grid lines at the labelled steps, under the data
		XYSeries grid = chart.addSeries("grid",
				steps.stream().flatMapToDouble((v) -> DoubleStream.of(left, right, right)).toArray(),
				steps.stream().flatMapToDouble((v) -> DoubleStream.of(v, v, Double.NaN)).toArray());
		grid.setXYSeriesRenderStyle(XYSeriesRenderStyle.Line);
		grid.setMarker(SeriesMarkers.NONE);
		grid.setLineColor(Color.LIGHT_GRAY);
		grid.setLineStyle(new BasicStroke(1f));
		grid.setShowInLegend(false);

		Marker dot = new Dot(5);
		addPoints(chart, "request latency (client)", "request (client)", report, ok, stride, (r) -> r.nanos() / 1e6,
				REQUEST, dot);
		addPoints(chart, "transfer latency", "transfer", report, ok, stride, LatencyPlot::transfer, TRANSFER, dot);
		String last = "last " + window + ((window == 1) ? " request" : " requests");
		addRolling(chart, "request p50, " + last, report, ok, window, stride, (r) -> r.nanos() / 1e6, 0.50, REQUEST,
				SOLID);
		addRolling(chart, "request p99, " + last, report, ok, window, stride, (r) -> r.nanos() / 1e6, 0.99, REQUEST,
				DASHED);
		addRolling(chart, "transfer p50, " + last, report, ok, window, stride, LatencyPlot::transfer, 0.50, TRANSFER,
				SOLID);
		addRolling(chart, "transfer p99, " + last, report, ok, window, stride, LatencyPlot::transfer, 0.99, TRANSFER,
				DASHED);
		List<RequestResult> failed = done.stream().filter((r) -> !r.ok()).toList();
		if (!failed.isEmpty()) {
			addPoints(chart, "failed (latency until the failure)", "failed (until the failure)", report, failed, stride,
					(r) -> r.nanos() / 1e6, FAILED, new Cross(8));
		}
		return chart;
	}

	/** Requests per rolling percentile: an eighth of the run, 5 to 100. */
	static int window(int requests) {
		return Math.clamp(requests / 8, Math.min(5, requests), 100);
	}

	private static void style(XYChart chart) {
		XYStyler styler = chart.getStyler();
		styler.setChartBackgroundColor(Color.WHITE);
		styler.setPlotBackgroundColor(Color.WHITE);
		styler.setPlotBorderColor(Color.GRAY);
		styler.setPlotGridLinesColor(Color.LIGHT_GRAY);
		styler.setPlotGridLinesStroke(new BasicStroke(1f));
		// the latency axis's grid lines are a series at its labels
		styler.setPlotGridHorizontalLinesVisible(false);
		styler.setAxisTicksMarksVisible(false);
		styler.setAxisTicksLineVisible(false);
		styler.setPlotTicksMarksVisible(false);
		// the axes' ranges span the whole plot, as the grid does
		styler.setPlotContentSize(1.0);
		styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
		// room under the title for the subtitle, which Subtitle draws
		styler.setChartTitlePadding(24);
		styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
		styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
		styler.setLegendPosition(LegendPosition.OutsideS);
		styler.setLegendLayout(LegendLayout.Horizontal);
		styler.setLegendBorderColor(Color.GRAY);
		// as long as XChart's step past a scatter entry of the legend (20 pixels)
		styler.setLegendSeriesLineLength(20);
		styler.setLegendPadding(12);
	}

	/**
	 * Sets the latency axis: log scale from the 1-2-5 step below the fastest request to
	 * the one above the slowest, labelled at each step by {@link LatencySteps} (XChart
	 * labels either every digit or only the decades).
	 * @return the steps
	 */
	private static List<Double> latencyAxis(XYChart chart, List<RequestResult> done) {
		double low = Double.MAX_VALUE;
		double high = 0;
		for (RequestResult result : done) {
			for (double value : new double[] { result.nanos() / 1e6, result.ok() ? transfer(result) : 0 }) {
				// a log axis has no place for zero
				if (value > 0) {
					low = Math.min(low, value);
					high = Math.max(high, value);
				}
			}
		}
		if (high == 0) {
			low = 1;
			high = 1000;
		}
		List<Double> steps = new ArrayList<>();
		for (int decade = (int) Math.floor(Math.log10(low)); decade <= (int) Math.ceil(Math.log10(high)); decade++) {
			for (int digit : new int[] { 1, 2, 5 }) {
				steps.add(digit * Math.pow(10, decade));
			}
		}
		double lowest = low;
		double highest = high;
		double lower = steps.stream().filter((v) -> v <= lowest * (1 + 1e-9)).max(Double::compare).orElse(low);
		double upper = steps.stream().filter((v) -> v >= highest * (1 - 1e-9)).min(Double::compare).orElse(high);
		if (upper <= lower) {
			lower /= 2;
			upper *= 2;
		}
		XYStyler styler = chart.getStyler();
		styler.setYAxisLogarithmic(true);
		styler.setYAxisLogarithmicDecadeOnly(false);
		styler.setYAxisMin(lower);
		styler.setYAxisMax(upper);
		styler.setYAxisTickLabelsColor(new Color(0, 0, 0, 0));
		double bottom = lower;
		double top = upper;
		List<Double> labelled = steps.stream()
			.filter((v) -> v >= bottom * (1 - 1e-9) && v <= top * (1 + 1e-9))
			.toList();
		chart.addAnnotation(new LatencySteps(labelled));
		return labelled;
	}

	/** A step of the latency axis: 0.05, 0.1, 2, 50, 1000. */
	private static String label(double value) {
		return BigDecimal.valueOf(value).round(new MathContext(1)).stripTrailingZeros().toPlainString();
	}

	private static double transfer(RequestResult result) {
		GenerateResponse answer = result.answer();
		return (answer != null) ? answer.timings().transfer() : Double.NaN;
	}

	private static void addPoints(XYChart chart, String name, String legend, LoadReport report,
			List<RequestResult> results, int stride, ToDoubleFunction<RequestResult> millis, Color colour,
			Marker marker) {
		List<double[]> points = new ArrayList<>();
		for (int i = 0; i < results.size(); i += stride) {
			double value = millis.applyAsDouble(results.get(i));
			// a log axis has no place for zero
			if (value > 0) {
				points.add(new double[] { report.secondsSinceStart(results.get(i)), value });
			}
		}
		if (points.isEmpty()) {
			return;
		}
		XYSeries series = add(chart, name, points);
		// the legend is one row under the plot: short labels
		series.setLabel(legend);
		series.setXYSeriesRenderStyle(XYSeriesRenderStyle.Scatter);
		series.setMarker(marker);
		series.setMarkerColor(
				new Color(colour.getRed(), colour.getGreen(), colour.getBlue(), (colour == FAILED) ? 255 : 110));
	}

	private static void addRolling(XYChart chart, String name, LoadReport report, List<RequestResult> ok, int window,
			int stride, ToDoubleFunction<RequestResult> millis, double fraction, Color colour, BasicStroke stroke) {
		List<double[]> points = new ArrayList<>();
		double[] values = ok.stream().mapToDouble(millis).toArray();
		for (int end = window; end <= values.length; end += stride) {
			double[] last = Arrays.copyOfRange(values, end - window, end);
			double value = LoadReport.nearestRank(last, fraction);
			if (value > 0) {
				points.add(new double[] { report.secondsSinceStart(ok.get(end - 1)), value });
			}
		}
		if (points.isEmpty()) {
			return;
		}
		XYSeries series = add(chart, name, points);
		// "request p50, last 29" in the legend
		series.setLabel(name.replaceFirst(" requests?$", ""));
		series.setXYSeriesRenderStyle(XYSeriesRenderStyle.Line);
		series.setMarker(SeriesMarkers.NONE);
		series.setLineColor(colour);
		series.setLineStyle(stroke);
	}

	private static XYSeries add(XYChart chart, String name, List<double[]> points) {
		double[] x = points.stream().mapToDouble((p) -> p[0]).toArray();
		double[] y = points.stream().mapToDouble((p) -> p[1]).toArray();
		return chart.addSeries(name, x, y);
	}

	private static String subtitle(LoadReport report, int stride) {
		LoadOptions options = report.options();
		List<GenerateResponse> answers = report.answers();
		// the engine without where its library came from
		String engine = answers.isEmpty() ? "no answers" : answers.getFirst().engine().replaceFirst(" \\(.*", "");
		return String.format(Locale.ROOT,
				"nixl4j sample, %s; %d requests (%d failed), concurrency %d, %s; "
						+ "request p50 %.1f ms, p99 %.1f ms; transfer p50 %.1f ms, p99 %.1f ms%s",
				engine, report.results().size(), report.failed().size(), options.concurrency(), report.prompts(),
				report.clientPercentile(0.50), report.clientPercentile(0.99),
				report.percentile((a) -> a.timings().transfer(), 0.50),
				report.percentile((a) -> a.timings().transfer(), 0.99),
				(stride > 1) ? "; every " + stride + "th request drawn" : "");
	}

	/** A filled circle of a fixed diameter. */
	private static final class Dot extends Marker {

		private final double diameter;

		Dot(double diameter) {
			this.diameter = diameter;
		}

		@Override
		public void paint(Graphics2D g, double x, double y, int markerSize) {
			g.fill(new Ellipse2D.Double(x - this.diameter / 2, y - this.diameter / 2, this.diameter, this.diameter));
		}

	}

	/** A diagonal cross of a fixed size. */
	private static final class Cross extends Marker {

		private final double size;

		Cross(double size) {
			this.size = size;
		}

		@Override
		public void paint(Graphics2D g, double x, double y, int markerSize) {
			double half = this.size / 2;
			g.setStroke(new BasicStroke(2f));
			g.draw(new Line2D.Double(x - half, y - half, x + half, y + half));
			g.draw(new Line2D.Double(x - half, y + half, x + half, y - half));
		}

	}

	/**
	 * The labels of the latency axis at 1-2-5 steps, right-aligned left of the plot where
	 * XChart's own (transparent) labels are; and the plot's border.
	 */
	private static final class LatencySteps extends Annotation {

		private final List<Double> steps;

		LatencySteps(List<Double> steps) {
			super(false);
			this.steps = steps;
		}

		@Override
		public void paint(Graphics2D g) {
			XYStyler styler = (XYStyler) this.styler;
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setFont(styler.getAxisTickLabelsFont());
			g.setColor(styler.getAxisTickLabelsColor());
			double right = getXAxisScreenValueForMin() - styler.getPlotMargin() - styler.getAxisTickMarkLength()
					- styler.getAxisTickPadding();
			for (double value : this.steps) {
				String text = label(value);
				Rectangle2D bounds = g.getFontMetrics().getStringBounds(text, g);
				double y = this.chart.getScreenYFromChart(value);
				g.drawString(text, (float) (right - bounds.getWidth()),
						(float) (y + g.getFontMetrics().getAscent() / 2.0 - 1));
			}
			// the grid series ends on the plot's border: drawn again over it
			g.setColor(styler.getPlotBorderColor());
			g.setStroke(new BasicStroke(1f));
			g.drawRect(getXAxisScreenValueForMin(), getYAxisScreenValueForMin(),
					getXAxisScreenValueForMax() - getXAxisScreenValueForMin(),
					getYAxisScreenValueForMax() - getYAxisScreenValueForMin());
		}

	}

	/** A line under the title, centred over the plot. */
	private static final class Subtitle extends Annotation {

		private final String text;

		Subtitle(String text) {
			super(true);
			this.text = text;
		}

		@Override
		public void paint(Graphics2D g) {
			g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
			g.setFont(SUBTITLE);
			g.setColor(this.styler.getChartFontColor());
			Rectangle2D bounds = g.getFontMetrics().getStringBounds(this.text, g);
			double left = getXAxisScreenValueForMin();
			double right = getXAxisScreenValueForMax();
			g.drawString(this.text, (float) ((left + right - bounds.getWidth()) / 2), getYAxisScreenValueForMin() - 8f);
		}

	}

}
