package dev.llmsidecar.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The tools' SVG charts, written by hand (no library): a figure of panels, each a line/scatter plot with its own
 * axes (linear, log or categories), grid, tick labels, a legend, and markers (vertical, horizontal lines, rings,
 * notes). Axes cover their data: linear from 0 (or from below a negative minimum) to a rounded maximum, log in whole
 * decades. The sweep's and the benchmark's reports draw with it.
 */
public final class SvgChart {

    public static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#d62728", "#2ca02c", "#9467bd"};

    private final StringBuilder sb = new StringBuilder();

    /** @param title the figure's title, centred at the top; null for none */
    public SvgChart(int width, int height, String title) {
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">%n", width, height, width,
                height));
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        if (title != null) {
            text(width / 2.0, 18, title, "middle", 14, "black");
        }
    }

    public void text(double x, double y, String s, String anchor, int size, String color) {
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\" "
                + "fill=\"%s\">%s</text>%n", x, y, anchor, size, color, escape(s)));
    }

    public String toSvg() {
        return sb + "</svg>\n";
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** One axis: how values map onto it and where its ticks are. */
    public static final class Axis {
        private final double min;
        private final double max;
        private final boolean log;
        /** Categories: the values, placed evenly in this order; null otherwise. */
        private final double[] categories;
        private final List<Double> ticks;
        final String label;

        private Axis(double min, double max, boolean log, double[] categories, List<Double> ticks, String label) {
            this.min = min;
            this.max = max;
            this.log = log;
            this.categories = categories;
            this.ticks = ticks;
            this.label = label;
        }

        /** Linear, covering [dataMin, dataMax] and 0, rounded out to nice ticks. */
        public static Axis linear(double dataMin, double dataMax, String label) {
            double[] r = range(dataMin, dataMax, false);
            return new Axis(r[0], r[1], false, null, ticks(r[0], r[1], false), label);
        }

        /** Logarithmic, whole decades covering [dataMin, dataMax] (a minimum of 0 or less: a decade below the max). */
        public static Axis log(double dataMin, double dataMax, String label) {
            double[] r = range(dataMin, dataMax, true);
            return new Axis(r[0], r[1], true, null, ticks(r[0], r[1], true), label);
        }

        /** Logarithmic from exactly {@code min} to {@code max}, with ticks at {@code at} (e.g. the loads run). */
        public static Axis log(double min, double max, double[] at, String label) {
            List<Double> t = new ArrayList<>();
            for (double v : at) {
                t.add(v);
            }
            return new Axis(min, max, true, null, t, label);
        }

        /** Evenly spaced points, one per value in this order, each labelled with its value. */
        public static Axis categories(double[] values, String label) {
            List<Double> t = new ArrayList<>();
            for (double v : values) {
                t.add(v);
            }
            return new Axis(Double.NaN, Double.NaN, false, values.clone(), t, label);
        }

        /** Where {@code v} lies, 0 at the start of the axis and 1 at its end; NaN for a value it cannot show. */
        double fraction(double v) {
            if (categories != null) {
                for (int i = 0; i < categories.length; i++) {
                    if (categories[i] == v) {
                        return categories.length == 1 ? 0.5 : 0.05 + 0.9 * i / (categories.length - 1);
                    }
                }
                return Double.NaN;
            }
            if (log) {
                return (Math.log(Math.max(v, min)) - Math.log(min)) / (Math.log(max) - Math.log(min));
            }
            return (v - min) / (max - min);
        }

        /** The value clamped into the axis (categories: as is). */
        double clamp(double v) {
            return categories != null ? v : Math.max(min, Math.min(max, v));
        }

        boolean shows(double v) {
            return !Double.isNaN(v) && !Double.isInfinite(v) && (!log || v > 0)
                    && (categories == null || !Double.isNaN(fraction(v)));
        }
    }

    /** A plot area at (left, top), w by h pixels, with its axes drawn and labelled. */
    public Panel panel(double left, double top, double w, double h, Axis x, Axis y, String title) {
        return new Panel(left, top, w, h, x, y, title);
    }

    /** One plot area with its own axes. */
    public final class Panel {
        final double left;
        final double top;
        final double w;
        final double h;
        final Axis xAxis;
        final Axis yAxis;
        private int legendRow;
        private boolean legendAtBottom;

        private Panel(double left, double top, double w, double h, Axis xAxis, Axis yAxis, String title) {
            this.left = left;
            this.top = top;
            this.w = w;
            this.h = h;
            this.xAxis = xAxis;
            this.yAxis = yAxis;
            text(left + w / 2, top - 8, title, "middle", 12, "black");
            line(left, top + h, left + w, top + h, "black", 1, null);
            line(left, top, left, top + h, "black", 1, null);
            for (double t : xAxis.ticks) {
                double x = x(t);
                line(x, top + h, x, top + h + 4, "black", 1, null);
                line(x, top, x, top + h, "#eee", 1, null);
                text(x, top + h + 15, tick(t), "middle", 10, "black");
            }
            for (double t : yAxis.ticks) {
                double y = y(t);
                line(left - 4, y, left, y, "black", 1, null);
                line(left, y, left + w, y, "#eee", 1, null);
                text(left - 6, y + 3, tick(t), "end", 10, "black");
            }
            text(left + w / 2, top + h + 30, xAxis.label, "middle", 11, "black");
            sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                    + "transform=\"rotate(-90 %.1f %.1f)\">%s</text>%n", left - 42, top + h / 2, left - 42, top + h / 2,
                    escape(yAxis.label)));
        }

        /** Legend entries from the bottom left up (for data that fills the top). */
        public Panel legendAtBottom() {
            legendAtBottom = true;
            return this;
        }

        double x(double v) {
            return left + w * xAxis.fraction(v);
        }

        double y(double v) {
            return top + h * (1 - yAxis.fraction(v));
        }

        boolean inside(double xv, double yv) {
            return xAxis.shows(xv) && yAxis.shows(yv);
        }

        /** A line through the points it can show, with a marker on each, and a legend entry (label not null). */
        public void series(double[] xs, double[] ys, String color, String label, boolean dashed) {
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < xs.length; i++) {
                if (inside(xs[i], ys[i])) {
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(xs[i]), y(yAxis.clamp(ys[i]))));
                    sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>%n",
                            x(xs[i]), y(yAxis.clamp(ys[i])), color));
                }
            }
            sb.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" "
                    + "stroke-width=\"1.5\"%s/>%n", points.toString().trim(), color,
                    dashed ? " stroke-dasharray=\"5 3\"" : ""));
            if (label != null) {
                double ly = legendAtBottom ? top + h - 10 - 13 * legendRow++ : top + 10 + 13 * legendRow++;
                line(left + 8, ly - 3, left + 24, ly - 3, color, 1.5, dashed ? "5 3" : null);
                text(left + 28, ly, label, "start", 10, "black");
            }
        }

        /** A vertical marker line at x with a label at its bottom (or top). */
        public void vertical(double xv, String color, String label, boolean labelAtTop) {
            if (Double.isNaN(xv)) {
                return;
            }
            double x = x(xAxis.clamp(xv));
            line(x, top, x, top + h, color, 1.2, "4 3");
            text(x + 3, labelAtTop ? top + 12 : top + h - 6, label, "start", 10, color);
        }

        /** A horizontal marker line at y with a label at its right end (nothing when y is off the axis). */
        public void horizontal(double yv, String color, String label) {
            if (!yAxis.shows(yv) || yv != yAxis.clamp(yv)) {
                return;
            }
            double y = y(yv);
            line(left, y, left + w, y, color, 1, "2 3");
            text(left + w - 3, y - 3, label, "end", 10, color);
        }

        /** A vertical bar from {@code lo} to {@code hi} at x with short caps: an interval around a point. */
        public void errorBar(double xv, double lo, double hi, String color) {
            if (!xAxis.shows(xv) || Double.isNaN(lo) || Double.isNaN(hi)) {
                return;
            }
            double x = x(xv);
            double y1 = y(yAxis.clamp(lo));
            double y2 = y(yAxis.clamp(hi));
            line(x, y1, x, y2, color, 1.2, null);
            line(x - 4, y1, x + 4, y1, color, 1.2, null);
            line(x - 4, y2, x + 4, y2, color, 1.2, null);
        }

        /** A ring around a point, with a label. */
        public void ring(double xv, double yv, String color, String label) {
            if (!inside(xv, yv)) {
                return;
            }
            sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"none\" stroke=\"%s\" "
                    + "stroke-width=\"2\"/>%n", x(xv), y(yAxis.clamp(yv)), color));
            text(x(xv) + 9, y(yAxis.clamp(yv)) - 8, label, "start", 10, color);
        }

        /** A small label next to a point. */
        public void note(double xv, double yv, String s) {
            if (inside(xv, yv)) {
                text(x(xv) + 4, y(yAxis.clamp(yv)) + 12, s, "start", 9, "#555");
            }
        }
    }

    void line(double x1, double y1, double x2, double y2, String color, double width, String dash) {
        sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                + "stroke-width=\"%.1f\"%s/>%n", x1, y1, x2, y2, color, width,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\""));
    }

    /** Axis limits: linear from 0 (or a nice step below a negative minimum) to a nice maximum; log: decades. */
    static double[] range(double min, double max, boolean log) {
        if (Double.isNaN(max) || max <= 0) {
            max = 1;
        }
        if (log) {
            double lo = Double.isNaN(min) || min <= 0 ? max / 10 : min;
            return new double[] {Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(max)))};
        }
        double low = Double.isNaN(min) ? 0 : Math.min(0, min);
        double step = niceStep((max - low) / 5);
        return new double[] {Math.floor(low / step) * step, Math.ceil(max / step) * step};
    }

    static double niceStep(double raw) {
        double p = Math.pow(10, Math.floor(Math.log10(raw)));
        double f = raw / p;
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
    }

    static List<Double> ticks(double min, double max, boolean log) {
        List<Double> t = new ArrayList<>();
        if (log) {
            for (double d = min; d <= max * 1.0001; d *= 10) {
                t.add(d);
                if (max / min <= 1000) {
                    if (2 * d < max) {
                        t.add(2 * d);
                    }
                    if (5 * d < max) {
                        t.add(5 * d);
                    }
                }
            }
            return t;
        }
        double step = niceStep((max - min) / 5);
        for (double v = min; v <= max + step * 1e-6; v += step) {
            t.add(Math.abs(v) < step * 1e-9 ? 0 : v);
        }
        return t;
    }

    /** A tick label: whole numbers from 100 up, one decimal from 1, two significant digits below. */
    public static String tick(double v) {
        if (v == 0) {
            return "0";
        }
        double a = Math.abs(v);
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 1) {
            return String.format(Locale.ROOT, v == Math.rint(v) ? "%.0f" : "%.1f", v);
        }
        return Fmt.sig(v, 2);
    }
}
