package dev.llmsidecar.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Hand-written SVG: panels with axes, lines, markers and labels. No library. */
final class Svg {

    static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#d62728", "#2ca02c", "#9467bd"};

    private final StringBuilder sb = new StringBuilder();
    private final int width;
    private final int height;

    Svg(int width, int height, String title) {
        this.width = width;
        this.height = height;
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">%n", width, height, width,
                height));
        sb.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        text(width / 2.0, 18, title, "middle", 14, "black");
    }

    void text(double x, double y, String s, String anchor, int size, String color) {
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\" "
                + "fill=\"%s\">%s</text>%n", x, y, anchor, size, color, escape(s)));
    }

    String done() {
        return sb + "</svg>\n";
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** One plot area with its own scales. */
    final class Panel {
        final double left;
        final double top;
        final double w;
        final double h;
        final double xMin;
        final double xMax;
        final double yMin;
        final double yMax;
        final boolean logY;
        final boolean logX;
        private int legendRow;
        private boolean legendAtBottom;

        Panel(double left, double top, double w, double h, double xMin, double xMax, double yMin, double yMax,
                boolean logY, String title, String xLabel, String yLabel) {
            this(left, top, w, h, xMin, xMax, null, yMin, yMax, logY, title, xLabel, yLabel);
        }

        /** @param xTicks null: a linear x axis from 0; else a log x axis from xMin to xMax with these ticks */
        Panel(double left, double top, double w, double h, double xMin, double xMax, double[] xTicks, double yMin,
                double yMax, boolean logY, String title, String xLabel, String yLabel) {
            this.left = left;
            this.top = top;
            this.w = w;
            this.h = h;
            this.logY = logY;
            this.logX = xTicks != null;
            double[] xr = logX ? new double[] {xMin, xMax} : range(xMin, xMax, false);
            double[] yr = range(yMin, yMax, logY);
            this.xMin = xr[0];
            this.xMax = xr[1];
            this.yMin = yr[0];
            this.yMax = yr[1];
            text(left + w / 2, top - 8, title, "middle", 12, "black");
            line(left, top + h, left + w, top + h, "black", 1, null);
            line(left, top, left, top + h, "black", 1, null);
            List<Double> xt = new ArrayList<>();
            if (logX) {
                for (double t : xTicks) {
                    xt.add(t);
                }
            } else {
                xt = ticks(this.xMin, this.xMax, false);
            }
            for (double t : xt) {
                double x = x(t);
                line(x, top + h, x, top + h + 4, "black", 1, null);
                line(x, top, x, top + h, "#eee", 1, null);
                text(x, top + h + 15, num(t), "middle", 10, "black");
            }
            for (double t : ticks(this.yMin, this.yMax, logY)) {
                double y = y(t);
                line(left - 4, y, left, y, "black", 1, null);
                line(left, y, left + w, y, "#eee", 1, null);
                text(left - 6, y + 3, num(t), "end", 10, "black");
            }
            text(left + w / 2, top + h + 30, xLabel, "middle", 11, "black");
            sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\" "
                    + "transform=\"rotate(-90 %.1f %.1f)\">%s</text>%n", left - 42, top + h / 2, left - 42, top + h / 2,
                    escape(yLabel)));
        }

        /** Legend entries from the bottom left up (for data that fills the top). */
        Panel legendAtBottom() {
            legendAtBottom = true;
            return this;
        }

        double x(double v) {
            if (logX) {
                return left + w * (Math.log(v) - Math.log(xMin)) / (Math.log(xMax) - Math.log(xMin));
            }
            return left + w * (v - xMin) / (xMax - xMin);
        }

        double y(double v) {
            if (logY) {
                double lv = Math.log10(Math.max(v, yMin));
                return top + h * (1 - (lv - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin)));
            }
            return top + h * (1 - (v - yMin) / (yMax - yMin));
        }

        boolean inside(double xv, double yv) {
            return !Double.isNaN(xv) && !Double.isNaN(yv) && !Double.isInfinite(yv) && (!logY || yv > 0)
                    && (!logX || xv > 0);
        }

        /** A line through the finite points, with a marker on each, and a legend entry. */
        void series(double[] xs, double[] ys, String color, String label, boolean dashed) {
            StringBuilder points = new StringBuilder();
            for (int i = 0; i < xs.length; i++) {
                if (inside(xs[i], ys[i])) {
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(xs[i]), y(clampY(ys[i]))));
                    sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>%n",
                            x(xs[i]), y(clampY(ys[i])), color));
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

        private double clampY(double v) {
            return Math.max(yMin, Math.min(yMax, v));
        }

        /** A vertical marker line at x with a label at its bottom (or top). */
        void vertical(double xv, String color, String label, boolean labelAtTop) {
            if (Double.isNaN(xv)) {
                return;
            }
            double x = x(Math.max(xMin, Math.min(xMax, xv)));
            line(x, top, x, top + h, color, 1.2, "4 3");
            text(x + 3, labelAtTop ? top + 12 : top + h - 6, label, "start", 10, color);
        }

        /** A horizontal marker line at y with a label at its right end. */
        void horizontal(double yv, String color, String label) {
            if (Double.isNaN(yv) || yv < yMin || yv > yMax) {
                return;
            }
            double y = y(yv);
            line(left, y, left + w, y, color, 1, "2 3");
            text(left + w - 3, y - 3, label, "end", 10, color);
        }

        /** A ring around a point, with a label. */
        void ring(double xv, double yv, String color, String label) {
            if (!inside(xv, yv)) {
                return;
            }
            sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"none\" stroke=\"%s\" "
                    + "stroke-width=\"2\"/>%n", x(xv), y(clampY(yv)), color));
            text(x(xv) + 9, y(clampY(yv)) - 8, label, "start", 10, color);
        }

        /** A small label next to a point. */
        void note(double xv, double yv, String s) {
            if (inside(xv, yv)) {
                text(x(xv) + 4, y(clampY(yv)) + 12, s, "start", 9, "#555");
            }
        }
    }

    void line(double x1, double y1, double x2, double y2, String color, double width, String dash) {
        sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                + "stroke-width=\"%.1f\"%s/>%n", x1, y1, x2, y2, color, width,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\""));
    }

    /** Axis limits: linear from 0 (or below the minimum when negative) to a nice maximum; log: decades. */
    static double[] range(double min, double max, boolean log) {
        if (Double.isNaN(max) || max <= 0) {
            max = 1;
        }
        if (log) {
            double lo = Double.isNaN(min) || min <= 0 ? max / 10 : min;
            return new double[] {Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(max)))};
        }
        double step = niceStep(max / 5);
        return new double[] {0, Math.ceil(max / step) * step};
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

    static String num(double v) {
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
        return new java.math.BigDecimal(v).round(new java.math.MathContext(2)).stripTrailingZeros().toPlainString();
    }
}
