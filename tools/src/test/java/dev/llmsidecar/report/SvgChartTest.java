package dev.llmsidecar.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.report.SvgChart.Axis;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The reports' chart writer: axes cover their data, points land where their values say, text is escaped. */
class SvgChartTest {

    static final Pattern CIRCLE = Pattern.compile("<circle cx=\"([\\d.]+)\" cy=\"([\\d.]+)\" r=\"2.5\"");

    static List<double[]> points(String svg) {
        List<double[]> out = new ArrayList<>();
        Matcher m = CIRCLE.matcher(svg);
        while (m.find()) {
            out.add(new double[] {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2))});
        }
        return out;
    }

    @Test
    void linearAxesCoverTheirDataWithNiceEnds() {
        assertThat(SvgChart.range(0, 107_000, false)).containsExactly(0, 125_000);
        assertThat(SvgChart.range(3, 9.2, false)).containsExactly(0, 10);
        // negative data: the axis goes below zero instead of clipping it
        assertThat(SvgChart.range(-12, 40, false)).containsExactly(-20, 40);
        assertThat(SvgChart.range(0.004, 1.7, true)).containsExactly(0.001, 10);
        assertThat(SvgChart.range(Double.NaN, Double.NaN, false)).containsExactly(0, 1);
    }

    @Test
    void pointsLandOnTheirValues() {
        SvgChart c = new SvgChart(400, 300, "t <1> & \"2\"");
        SvgChart.Panel p = c.panel(50, 50, 200, 100, Axis.linear(0, 10, "x"), Axis.linear(-5, 20, "y"), "panel");
        p.series(new double[] {0, 5, 10}, new double[] {-5, 0, 20}, "#000", "a", false);
        String svg = c.toSvg();
        assertThat(svg).startsWith("<svg ").endsWith("</svg>\n").contains("t &lt;1&gt; &amp; &quot;2&quot;");
        // y axis -5 .. 20 (steps of 5): -5 at the bottom, 0 a fifth of the way up, 20 at the top
        assertThat(points(svg)).containsExactly(new double[] {50, 150}, new double[] {150, 130},
                new double[] {250, 50});
    }

    @Test
    void categoriesAreEvenlySpacedAndLogAxesByDecade() {
        SvgChart c = new SvgChart(400, 300, null);
        SvgChart.Panel p = c.panel(0, 0, 100, 100, Axis.categories(new double[] {1, 100, 1000, 2000}, "streams"),
                Axis.log(1, 1000, "µs"), "panel");
        p.series(new double[] {1, 100, 1000, 2000, 7}, new double[] {1, 10, 100, 1000, 5}, "#000", null, true);
        List<double[]> pts = points(c.toSvg());
        // 7 is not a category: not drawn
        assertThat(pts).hasSize(4);
        assertThat(pts.stream().mapToDouble(xy -> xy[0]).toArray()).containsExactly(5, 35, 65, 95);
        assertThat(pts.stream().mapToDouble(xy -> xy[1]).toArray()).containsExactly(100, 66.7, 33.3, 0);
        assertThat(c.toSvg()).doesNotContain("<text x=\"50.0\" y=\"18.0\""); // no figure title
    }

    @Test
    void markersOffTheAxisAreLeftOutOrClamped() {
        SvgChart c = new SvgChart(400, 300, null);
        SvgChart.Panel p = c.panel(0, 0, 100, 100, Axis.linear(0, 10, "x"), Axis.linear(0, 10, "y"), "p");
        p.horizontal(50, "#f00", "above the axis");
        p.vertical(50, "#f00", "clamped", false);
        String svg = c.toSvg();
        assertThat(svg).doesNotContain("above the axis").contains("clamped")
                .contains("<line x1=\"100.0\" y1=\"0.0\" x2=\"100.0\" y2=\"100.0\" stroke=\"#f00\"");
    }
}
