package dev.llmsidecar.testkit;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The repository's root, for tests that read what lies beside the modules (docs/, deploy/, charts/, grafana/): a test
 * runs in its module's directory.
 */
public final class Repo {

    private Repo() {
    }

    /** The nearest directory, from the working directory up, that holds the sidecar module and docs/. */
    public static Path root() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("sidecar")) && Files.isDirectory(p.resolve("docs"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
    }
}
