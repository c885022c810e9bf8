package dev.nixl4j.sample.load;

import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import javax.imageio.ImageIO;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.LayoutDocument;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import org.jfree.chart.ChartRenderingInfo;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.XYPlot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

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
		ChartRenderingInfo info = new ChartRenderingInfo();
		LatencyPlot.chart(report).createBufferedImage(LatencyPlot.WIDTH, LatencyPlot.HEIGHT, info);
		Rectangle2D data = info.getPlotInfo().getDataArea();
		assertThat(data.getWidth()).isGreaterThan(LatencyPlot.WIDTH / 2.0);
		// Not blank: the request (blue), transfer (orange) and failure (red) marks are in
		// the
		// data area, not only in the legend.
		assertThat(pixelsNear(image, data, 0x1f77b4)).isGreaterThan(500);
		assertThat(pixelsNear(image, data, 0xff7f0e)).isGreaterThan(500);
		assertThat(pixelsNear(image, data, 0xd62728)).isGreaterThan(10);
	}

	@Test
	void pointsAreEachRequestAtTheTimeItsAnswerCameLinesTheRollingPercentiles() {
		LoadReport report = run();
		JFreeChart chart = LatencyPlot.chart(report);
		XYPlot plot = chart.getXYPlot();

		assertThat(plot.getDataset().getSeriesCount()).isEqualTo(7);
		// 237 answers; the rolling lines start once 30 (an eighth of 240) are in
		assertThat(plot.getDataset().getItemCount(0)).isEqualTo(REQUESTS - 3);
		assertThat(plot.getDataset().getItemCount(1)).isEqualTo(REQUESTS - 3);
		assertThat(LatencyPlot.window(REQUESTS - 3)).isEqualTo(29);
		assertThat(plot.getDataset().getItemCount(2)).isEqualTo(REQUESTS - 3 - 29 + 1);
		assertThat(plot.getDataset().getItemCount(6)).isEqualTo(3);
		assertThat(plot.getDataset().getSeriesKey(2)).hasToString("request p50, last 29 requests");
		// request 0 answered at 25 ms, the last at 6 s
		assertThat(plot.getDataset().getXValue(0, 0)).isEqualTo(0.025);
		assertThat(plot.getDataset().getXValue(0, REQUESTS - 4)).isEqualTo(6.0);
		assertThat(plot.getDomainAxis().getRange().getUpperBound()).isGreaterThanOrEqualTo(6.0);
		// latency from 4 to 300 ms: a log axis from the 1-2-5 step below to the one above
		assertThat(plot.getRangeAxis().getRange().getLowerBound()).isEqualTo(2.0);
		assertThat(plot.getRangeAxis().getRange().getUpperBound()).isEqualTo(500.0);
		// the rolling p99 of requests in the slow phase (3 to 4 s) is above 200 ms,
		// before it
		// below 60 ms
		assertThat(plot.getDataset().getYValue(3, 0)).isLessThan(60);
		assertThat(maxY(plot, 3)).isGreaterThan(200);
	}

	@Test
	void theRollingWindowIsAnEighthOfTheRunFrom5To100() {
		assertThat(LatencyPlot.window(1)).isEqualTo(1);
		assertThat(LatencyPlot.window(3)).isEqualTo(3);
		assertThat(LatencyPlot.window(12)).isEqualTo(5);
		assertThat(LatencyPlot.window(48)).isEqualTo(6);
		assertThat(LatencyPlot.window(2000)).isEqualTo(100);
	}

	private static double maxY(XYPlot plot, int series) {
		double max = 0;
		for (int i = 0; i < plot.getDataset().getItemCount(series); i++) {
			max = Math.max(max, plot.getDataset().getYValue(series, i));
		}
		return max;
	}

	/** A run of 240 requests that answered every 25 ms, slow from 3 to 4 s, 3 failed. */
	private static LoadReport run() {
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
		for (int i = 0; i < REQUESTS; i++) {
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
		LoadOptions options = LoadOptions.parse(new String[] { "--requests", Integer.toString(REQUESTS) });
		return new LoadReport(options, results, START, REQUESTS * 25_000_000L, "UP", "UP", -1);
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
