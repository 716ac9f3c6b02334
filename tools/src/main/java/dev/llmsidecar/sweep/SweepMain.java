package dev.llmsidecar.sweep;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/sweep}: runs outside Quarkus, on the packaged jar's classpath
 * ({@code java -cp "target/quarkus-app/app/*:target/quarkus-app/lib/main/*:target/quarkus-app/lib/boot/*"
 * dev.llmsidecar.sweep.SweepMain --help}). Exit status 0 when the sweep ran, 2 for bad arguments, 1 when it failed.
 */
public final class SweepMain {

    private SweepMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        SweepOptions o;
        try {
            o = SweepOptions.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("sweep: " + e.getMessage());
            return 2;
        }
        if (o.help) {
            out.print(SweepOptions.help());
            return 0;
        }
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        SimSidecar sim = null;
        try {
            PrintStream log = o.quiet ? null : err;
            if (o.sim != null) {
                sim = startSim(o, vertx, log);
            }
            if (o.search) {
                Search.Result result = Search.run(o, vertx, log);
                Report.write(result.sweep(), o.out, commandLine(args));
                SearchReport.write(result, o.out, commandLine(args));
                for (String line : SearchReport.summary(result).split("\n")) {
                    out.println("sweep: search: " + line.replace("**", "").replaceFirst("^- ", ""));
                }
                out.println("sweep: report written to " + o.out.resolve("search.md"));
                return 0;
            }
            SweepResult result = Sweep.run(o, vertx, log);
            Report.write(result, o.out, commandLine(args));
            summary(result, out);
            out.println("sweep: report written to " + o.out.resolve("sweep.md"));
            return 0;
        } catch (IllegalArgumentException | IllegalStateException e) {
            err.println("sweep: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("sweep: failed: " + e);
            e.printStackTrace(err);
            return 1;
        } finally {
            if (sim != null) {
                try {
                    sim.close();
                } catch (Exception e) {
                    err.println("sweep: stopping --sim: " + e);
                }
            }
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // exiting anyway
            }
        }
    }

    /** Starts the simulated engine and the packaged sidecar, and points the options at them. */
    static SimSidecar startSim(SweepOptions o, Vertx vertx, PrintStream log) throws Exception {
        List<String> props = new ArrayList<>();
        if (o.slo != null && o.sloObjective == null) {
            o.sloObjective = "sweep";
            props.addAll(o.slo.asSidecarProperties("sweep"));
        }
        props.addAll(o.sidecarProperties);
        Path jar = o.sidecarJar != null ? o.sidecarJar
                : Path.of(System.getProperty("sweep.home", "."), "sidecar", "target", "quarkus-app", "quarkus-run.jar");
        SimSidecar sim = new SimSidecar(vertx, SimSidecar.behaviour(o.sim), jar, props, o.out.resolve("sidecar.log"),
                log);
        o.url = java.net.URI.create("http://127.0.0.1:" + sim.proxyPort);
        o.metricsUrl = "http://127.0.0.1:" + sim.managementPort + "/q/metrics";
        if (o.model == null) {
            o.model = sim.behaviour.model();
        }
        return sim;
    }

    static void summary(SweepResult r, PrintStream out) {
        SweepOptions o = r.options();
        out.println(r.knee().found()
                ? String.format(Locale.ROOT, "sweep: knee (step medians): %s %s (%s elasticity %.2f)",
                        o.formatLoad(r.knee().load()), o.loadUnit(), r.knee().metric(), r.knee().elasticity())
                : "sweep: knee (step medians): none found");
        out.println("sweep: knee (sidecar, llm_sidecar_saturation_knee_requests): "
                + (Double.isNaN(r.sidecarKnee()) ? "none" : Report.f3(r.sidecarKnee()) + " requests in flight"));
        if (r.goodput() != null) {
            out.println(r.goodput().found()
                    ? String.format(Locale.ROOT, "sweep: goodput at the SLO: %s %s offered, %s req/s achieved, %s "
                            + "good req/s", o.formatLoad(r.goodput().load()), o.loadUnit(),
                            Report.f3(r.goodput().throughput()), Report.f3(r.goodput().goodThroughput()))
                    : "sweep: goodput at the SLO: no step met it");
        }
        for (String w : r.warnings()) {
            out.println("sweep: warning: " + w);
        }
    }

    static String commandLine(String[] args) {
        StringBuilder sb = new StringBuilder("bin/sweep");
        for (String a : args) {
            sb.append(' ');
            if (a.matches("[A-Za-z0-9_./:=,+@%-]+")) {
                sb.append(a);
            } else {
                sb.append('\'').append(a.replace("'", "'\\''")).append('\'');
            }
        }
        return sb.toString();
    }
}
