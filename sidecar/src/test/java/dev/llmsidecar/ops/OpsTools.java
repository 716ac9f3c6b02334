package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.llmsidecar.testkit.Repo;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * External tools of the ops tests (promtool, prometheus, yamllint, kubectl, node + sidecar/src/test/ops-node). Outside CI a
 * missing tool skips the test with the install hint; with {@code CI=true} it fails, so CI never passes silently.
 */
public final class OpsTools {

    static final Path ROOT = Repo.root();
    static final Path NODE_DIR = ROOT.resolve("sidecar/src/test/ops-node");

    private OpsTools() {
    }

    static boolean ci() {
        String ci = System.getenv("CI");
        return ci != null && !ci.isBlank() && !ci.equalsIgnoreCase("false");
    }

    /** Absolute path of {@code tool} on PATH; skips (locally) or fails (CI) with {@code installHint} when absent. */
    public static Path require(String tool, String installHint) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        missing(tool + " not on PATH (" + installHint + ")");
        return null;
    }

    /** node plus the npm packages of sidecar/src/test/ops-node (bin/test runs npm install there). */
    static Path requireNodeValidation() {
        Path node = require("node", "apt-get install nodejs npm");
        if (!Files.exists(NODE_DIR.resolve("node_modules/@grafana/schema/package.json"))
                || !Files.exists(NODE_DIR.resolve("node_modules/kubernetes-models/package.json"))) {
            missing("src/test/ops-node/node_modules missing (run: cd src/test/ops-node && npm ci)");
        }
        return node;
    }

    private static void missing(String message) {
        if (ci()) {
            fail("CI=true and " + message);
        }
        Assumptions.abort(message);
    }

    /** Exit code, standard output and standard error of a finished command. */
    record Result(int exit, String stdout, String stderr) {
        String output() {
            return stdout + (stderr.isEmpty() ? "" : "\n[stderr]\n" + stderr);
        }

        Result assertOk(String what) {
            assertThat(exit).as(what + " exit code; output:\n" + output()).isZero();
            return this;
        }
    }

    /** Runs a command to completion, killing it (by its PID) after {@code timeout}. */
    static Result run(Duration timeout, Path dir, List<String> command) {
        try {
            Path out = Files.createTempFile("ops-run", ".out");
            Path err = Files.createTempFile("ops-run", ".err");
            Process p = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            try {
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    fail("timed out after " + timeout + ": " + command + "\n" + Files.readString(out)
                            + Files.readString(err));
                }
                return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                        Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                p.destroyForcibly();
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static Result run(Duration timeout, Path dir, String... command) {
        return run(timeout, dir, List.of(command));
    }

    /** node validate.mjs ARGS in sidecar/src/test/ops-node. */
    static Result nodeValidate(String... args) {
        Path node = requireNodeValidation();
        List<String> cmd = new ArrayList<>(List.of(node.toString(), "validate.mjs"));
        cmd.addAll(List.of(args));
        return run(Duration.ofSeconds(120), NODE_DIR, cmd);
    }

    /** yamllint with deploy/yamllint.yml on the given files or directories. */
    static void yamllint(Path... paths) {
        Path yamllint = require("yamllint", "apt-get install yamllint");
        List<String> cmd = new ArrayList<>(List.of(yamllint.toString(), "--strict", "-c",
                ROOT.resolve("deploy/yamllint.yml").toString()));
        for (Path p : paths) {
            cmd.add(p.toString());
        }
        run(Duration.ofSeconds(60), ROOT, cmd).assertOk("yamllint " + List.of(paths));
    }

    /** target/ops, where rendered manifests are written for inspection. */
    static Path outDir() {
        Path dir = ROOT.resolve("target/ops");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return dir;
    }

    /** A loopback port that was free a moment ago (the caller retries if another process takes it first). */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
