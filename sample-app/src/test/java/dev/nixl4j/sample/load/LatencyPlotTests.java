package dev.nixl4j.sample.load;

import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import javax.imageio.ImageIO;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.LayoutDocument;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.within;

/**
 * The load report's latency plot, drawn from the samples of a run: 240 requests over 6
 * seconds with a slow phase in the middle and 3 failures.
 */
class LatencyPlotTests {

	private static final long START = 1_000_000_000L;

	private static final int REQUESTS = 240;

	@TempDir
	Path folder;

	@Test
	void writesAPngOfTheRunWithEverySeriesInsideThePlot() throws IOException {
		LoadReport report = run();
		Path png = this.folder.resolve("latency.png");

		LatencyPlot.write(report, png);

		assertThat(png).isRegularFile();
		BufferedImage image = ImageIO.read(png.toFile());
		assertThat(image).isNotNull();
		assertThat(image.getWidth()).isEqualTo(LatencyPlot.WIDTH);
		assertThat(image.getHeight()).isEqualTo(LatencyPlot.HEIGHT);
		// Where the data lie in that image: the same chart laid out at the same size.
		XYChart chart = LatencyPlot.chart(report);
		BitmapEncoder.getBufferedImage(chart);
		Rectangle2D data = dataArea(chart);
		assertThat(data.getWidth()).isGreaterThan(LatencyPlot.WIDTH / 2.0);
		// Not blank: the request (blue), transfer (orange) and failure (red) marks are in
		// the data area, not only in the legend.
		assertThat(pixelsNear(image, data, 0x1f77b4)).isGreaterThan(500);
		assertThat(pixelsNear(image, data, 0xff7f0e)).isGreaterThan(500);
		assertThat(pixelsNear(image, data, 0xd62728)).isGreaterThan(10);
	}

	@Test
	void theLatencyAxisIsLabelledAtOneTwoFiveStepsOnly() throws IOException {
		LoadReport report = run();
		Path png = this.folder.resolve("latency.png");
		LatencyPlot.write(report, png);
		BufferedImage image = ImageIO.read(png.toFile());
		XYChart chart = LatencyPlot.chart(report);
		BitmapEncoder.getBufferedImage(chart);
		Rectangle2D data = dataArea(chart);

		// a label is dark text in the strip left of the plot, at the height of its value
		for (double step : new double[] { 2, 5, 10, 20, 50, 100, 200, 500 }) {
			assertThat(darkPixelsLeftOf(image, data, chart.getScreenYFromChart(step))).as("label %s", step)
				.isGreaterThan(5);
		}
		for (double digit : new double[] { 3, 7, 30, 70, 300 }) {
			assertThat(darkPixelsLeftOf(image, data, chart.getScreenYFromChart(digit))).as("no label at %s", digit)
				.isZero();
		}
	}

	@Test
	void thePngIsWrittenWithoutXChartsVectorPdfAndGifLibraries() throws IOException {
		// sample-app's pom leaves them out of XChart's dependencies: the sample jar
		// carries
		// no LGPL code (VectorGraphics2D) and nothing a PNG does not need
		for (String absent : List.of("de.erichseifert.vectorgraphics2d.VectorGraphics2D",
				"de.rototor.pdfbox.graphics2d.PdfBoxGraphics2D", "org.apache.pdfbox.pdmodel.PDDocument",
				"com.madgag.gif.fmsware.AnimatedGifEncoder")) {
			assertThatExceptionOfType(ClassNotFoundException.class).as(absent).isThrownBy(() -> Class.forName(absent));
		}
		Path png = this.folder.resolve("latency.png");

		LatencyPlot.write(run(), png);

		assertThat(ImageIO.read(png.toFile()).getWidth()).isEqualTo(LatencyPlot.WIDTH);
	}

	@Test
	void pointsAreEachRequestAtTheTimeItsAnswerCameLinesTheRollingPercentiles() {
		LoadReport report = run();
		XYChart chart = LatencyPlot.chart(report);
		List<XYSeries> series = drawn(chart);

		assertThat(series).hasSize(7);
		// 237 answers; the rolling lines start once 30 (an eighth of 240) are in
		assertThat(series.get(0).getXData()).hasSize(REQUESTS - 3);
		assertThat(series.get(1).getXData()).hasSize(REQUESTS - 3);
		assertThat(LatencyPlot.window(REQUESTS - 3)).isEqualTo(29);
		assertThat(series.get(2).getXData()).hasSize(REQUESTS - 3 - 29 + 1);
		assertThat(series.get(6).getXData()).hasSize(3);
		assertThat(series.get(2).getName()).isEqualTo("request p50, last 29 requests");
		assertThat(series.get(6).getName()).isEqualTo("failed (latency until the failure)");
		// request 0 answered at 25 ms, the last at 6 s
		assertThat(series.get(0).getXData()[0]).isEqualTo(0.025);
		assertThat(series.get(0).getXData()[REQUESTS - 4]).isEqualTo(6.0);
		// the time axis from 0 to 6 s, with a margin of 1 % before and 2 % after
		assertThat(chart.getStyler().getXAxisMin()).isCloseTo(-0.06, within(1e-9));
		assertThat(chart.getStyler().getXAxisMax()).isCloseTo(6.12, within(1e-9));
		// latency from 4 to 300 ms: a log axis from the 1-2-5 step below to the one above
		assertThat(chart.getStyler().isYAxisLogarithmic()).isTrue();
		assertThat(chart.getStyler().getYAxisMin()).isEqualTo(2.0);
		assertThat(chart.getStyler().getYAxisMax()).isEqualTo(500.0);
		// the rolling p99 of requests in the slow phase (3 to 4 s) is above 200 ms,
		// before
		// it below 60 ms
		assertThat(series.get(3).getYData()[0]).isLessThan(60);
		assertThat(Arrays.stream(series.get(3).getYData()).max().orElseThrow()).isGreaterThan(200);
	}

	@Test
	void aLongRunDrawsEveryNthRequest() {
		int requests = LatencyPlot.MAX_POINTS * 2 + 1;
		LoadReport report = run(requests);
		XYChart chart = LatencyPlot.chart(report);
		List<XYSeries> series = drawn(chart);

		// every 3rd of the 40,001 - 3 answers (in order of their answers)
		assertThat(series.get(0).getXData()).hasSize(Math.ceilDiv(requests - 3, 3));
		assertThat(series.get(0).getXData().length).isLessThanOrEqualTo(LatencyPlot.MAX_POINTS);
		assertThat(series.get(2).getXData().length).isLessThanOrEqualTo(LatencyPlot.MAX_POINTS);
	}

	@Test
	void theRollingWindowIsAnEighthOfTheRunFrom5To100() {
		assertThat(LatencyPlot.window(1)).isEqualTo(1);
		assertThat(LatencyPlot.window(3)).isEqualTo(3);
		assertThat(LatencyPlot.window(12)).isEqualTo(5);
		assertThat(LatencyPlot.window(48)).isEqualTo(6);
		assertThat(LatencyPlot.window(2000)).isEqualTo(100);
	}

	/** A run of 240 requests that answered every 25 ms, slow from 3 to 4 s, 3 failed. */
	private static LoadReport run() {
		return run(REQUESTS);
	}

	/**
	 * A run of requests that answered every 25 ms, slow from request 120 to 159, requests
	 * 50, 130 and 200 failed.
	 */
	private static LoadReport run(int requests) {
		KvCacheLayout layout = KvCacheLayout.builder()
			.layers(32)
			.blocks(64)
			.blockSize(16)
			.kvHeads(8)
			.headDim(128)
			.dtypeSize(2)
			.build();
		SplittableRandom random = new SplittableRandom(22);
		List<RequestResult> results = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			long done = START + (i + 1) * 25_000_000L;
			boolean slow = i >= 120 && i < 160;
			double transfer = (slow ? 60 : 4) + random.nextDouble(2);
			double total = transfer + 20 + random.nextDouble(10);
			long nanos = (long) ((total + 5 + random.nextDouble(5)) * 1e6) + (slow ? 200_000_000L : 0);
			if (i == 50 || i == 130 || i == 200) {
				results.add(new RequestResult(i, 60_000_000L, done, null, "status 503"));
				continue;
			}
			GenerateResponse answer = new GenerateResponse("r" + i, "prefill", "decode", "native:UCX",
					LayoutDocument.of(layout), 500, 32, 32 * 2097152L, 0, true, "text",
					new GenerateResponse.Timings(10, 8, transfer, 2, total));
			results.add(new RequestResult(i, nanos, done, answer, null));
		}
		LoadOptions options = LoadOptions.parse(new String[] { "--requests", Integer.toString(requests) });
		return new LoadReport(options, results, START, requests * 25_000_000L, "UP", "UP", -1);
	}

	/** The series of the chart that the legend names: all but the grid lines. */
	private static List<XYSeries> drawn(XYChart chart) {
		return chart.getSeriesMap().values().stream().filter(XYSeries::isShowInLegend).toList();
	}

	/** The plot's area in a painted chart: from the axes' lower to their upper bounds. */
	private static Rectangle2D dataArea(XYChart chart) {
		double left = chart.getScreenXFromChart(chart.getStyler().getXAxisMin());
		double right = chart.getScreenXFromChart(chart.getStyler().getXAxisMax());
		double top = chart.getScreenYFromChart(chart.getStyler().getYAxisMax());
		double bottom = chart.getScreenYFromChart(chart.getStyler().getYAxisMin());
		return new Rectangle2D.Double(left, top, right - left, bottom - top);
	}

	/** Dark pixels in the 40 pixels left of the plot, within 4 rows of a height. */
	private static int darkPixelsLeftOf(BufferedImage image, Rectangle2D area, double y) {
		int count = 0;
		for (int row = (int) y - 4; row <= (int) y + 4; row++) {
			for (int x = (int) area.getMinX() - 40; x < (int) area.getMinX() - 2; x++) {
				int pixel = image.getRGB(x, row);
				if (((pixel >> 16) & 0xff) + ((pixel >> 8) & 0xff) + (pixel & 0xff) < 300) {
					count++;
				}
			}
		}
		return count;
	}

	private static int pixelsNear(BufferedImage image, Rectangle2D area, int rgb) {
		int count = 0;
		for (int y = (int) area.getMinY() + 1; y < (int) area.getMaxY(); y++) {
			for (int x = (int) area.getMinX() + 1; x < (int) area.getMaxX(); x++) {
				int pixel = image.getRGB(x, y);
				int distance = Math.abs(((pixel >> 16) & 0xff) - ((rgb >> 16) & 0xff))
						+ Math.abs(((pixel >> 8) & 0xff) - ((rgb >> 8) & 0xff))
						+ Math.abs((pixel & 0xff) - (rgb & 0xff));
				if (distance < 40) {
					count++;
				}
			}
		}
		return count;
	}

}
