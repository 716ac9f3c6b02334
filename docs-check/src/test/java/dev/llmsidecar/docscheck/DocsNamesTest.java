package dev.llmsidecar.docscheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every backticked name in README.md and docs/*.md that looks like code names something that exists, so a rename that
 * leaves a doc behind fails the build and says where.
 *
 * <p>What looks like code, and what it must resolve to:
 * <ul>
 * <li>{@code Class} (UpperCamelCase with a lowercase letter; ALL_CAPS tokens are constants, settings or acronyms and
 * are left alone): a class of that simple name, top-level or nested;</li>
 * <li>{@code Outer.Inner}, {@code Class.method}, {@code Class.method()}, {@code Class.method(args)},
 * {@code Class#method}, {@code Class.CONSTANT}, {@code Class.component}: some class of that simple name with that
 * nested class, method, field, enum constant or record component (its own or a supertype's); a name ending in an
 * ellipsis ({@code Test.upstreamDying…}) is a member whose name starts so;</li>
 * <li>{@code a.b.Class} (and the same with members): that class, or {@code dev.llmsidecar.a.b.Class};</li>
 * <li>{@code package/} and {@code package/Class} (with members; {@code .java} and a {@code .../} elision allowed):
 * a package of the build under {@code dev.llmsidecar} whose name ends with that path ({@code proxy/},
 * {@code wire/openai/}, {@code trace/TraceFiles}), or a file or directory of that path in the repository or in one of
 * its modules.</li>
 * </ul>
 * Classes are the build's own (every module's {@code target/classes} and {@code target/test-classes}), those of every
 * jar on this module's test classpath (which holds every module and their dependencies), and the JDK's. A name that
 * resolves only through a library may still be a stale statement about our own code: the checker cannot tell
 * "installs Netty's {@code HttpServerCodec}" from "as Netty's {@code HttpServerCodec} does".
 *
 * <p>Names that look like code but are not (Kubernetes kinds, alert names, file names, HTTP headers, other languages'
 * names) are in {@code not-code.txt}, each with where it is defined: a repository path that exists and contains it, or
 * one of the few kinds of outside reference that file declares. An entry no doc uses, or whose file does not hold it,
 * fails too.
 */
class DocsNamesTest {

    static final String ALLOWLIST = "docs-check/src/test/resources/not-code.txt";
    /** The modules whose compiled classes are the build's own. */
    static final List<String> MODULES = List.of("testkit", "sidecar", "tools", "bench/jmh", "docs-check");
    static final String OWN = "dev.llmsidecar.";

    private static final String ID = "[A-Za-z_$][A-Za-z0-9_$]*";
    private static final String TYPE = "([A-Z][A-Za-z0-9_$]*)";
    private static final String MEMBERS = "((?:[.#]" + ID + ")*)(…)?(\\([^()]*\\))?";
    static final Pattern SIMPLE = Pattern.compile(TYPE + MEMBERS);
    static final Pattern QUALIFIED = Pattern.compile("((?:[a-z][a-z0-9_]*\\.)+)" + TYPE + MEMBERS);
    /** Directories named as Java packages are (lowercase, no dot or dash): not URLs, API groups or other paths. */
    private static final String DIR = "[a-z][a-z0-9_]*/";
    /** A path may elide directories: {@code testkit/.../testkit/Processes}, {@code tools/…/sweep/SweepMain}. */
    private static final String ELIDED = "(?:\\.\\.\\.|…)/";
    static final Pattern PATH = Pattern.compile("((?:" + DIR + "|" + ELIDED + ")+)" + TYPE + MEMBERS);
    static final Pattern DIRECTORY = Pattern.compile("(?:" + DIR + ")+");
    private static final Pattern ALLOWLIST_ENTRY = Pattern.compile("(\\S+)\\s+(\\S+)");
    private static final Pattern KIND = Pattern.compile("@kind\\s+(\\S+)\\s+(.+)");

    static Path root;
    static ClassIndex index;
    static List<Found> found;

    /** A name of code in a doc: where it is, its text (without an argument list), and what it looked like. */
    record Found(String doc, int line, String span, String name, Matcher form) {
        String where() {
            return doc + ":" + line;
        }
    }

    @BeforeAll
    static void index() throws IOException {
        root = repositoryRoot();
        List<Path> own = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (String module : MODULES) {
            for (String[] kind : new String[][] {{"main", "classes"}, {"test", "test-classes"}}) {
                Path classes = root.resolve(module).resolve("target").resolve(kind[1]);
                if (Files.isDirectory(classes)) {
                    own.add(classes);
                } else if (Files.isDirectory(root.resolve(module).resolve("src").resolve(kind[0]).resolve("java"))) {
                    missing.add(root.relativize(classes).toString());
                }
            }
        }
        assertThat(missing).as("compiled classes to resolve the docs' names against: build the modules first "
                + "(mvn -o package -DskipTests compiles main and test classes)").isEmpty();
        index = new ClassIndex(own, ClassIndex.testClasspath());
        found = new ArrayList<>();
        for (Path doc : docs(root)) {
            String text = Files.readString(doc, StandardCharsets.UTF_8);
            for (CodeSpans.Span s : CodeSpans.of(text)) {
                Matcher form = form(s.text());
                if (form != null) {
                    String name = form.group(0).replaceFirst("\\([^()]*\\)$", "");
                    found.add(new Found(root.relativize(doc).toString(), s.line(), s.text(), name, form));
                }
            }
        }
    }

    @AfterAll
    static void close() throws IOException {
        if (index != null) {
            index.close();
        }
    }

    /** The repository's root: the property docs.check.repo, or the parent of this module. */
    static Path repositoryRoot() {
        String property = System.getProperty("docs.check.repo");
        Path root = (property != null ? Path.of(property) : Path.of("..")).toAbsolutePath().normalize();
        assertThat(root.resolve("README.md")).as("the repository root (docs.check.repo)").isRegularFile();
        return root;
    }

    /** README.md and docs/*.md (not docs/bench/: dated measurement records, which name the code of their day). */
    static List<Path> docs(Path root) throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** The form a span has if it looks like code, or null. */
    static Matcher form(String span) {
        String s = span.strip();
        for (Pattern p : List.of(SIMPLE, QUALIFIED, PATH, DIRECTORY)) {
            Matcher m = p.matcher(s);
            if (m.matches()) {
                boolean allCaps = p != DIRECTORY && m.group(p == SIMPLE ? 1 : 2).chars().noneMatch(Character::isLowerCase);
                return allCaps ? null : m; // CONSTANT, PT0.5S, TTFT: not a class name
            }
        }
        return null;
    }

    @Test
    void everyNameOfCodeInTheDocsResolves() throws IOException {
        Allowlist allowlist = Allowlist.read(root);
        List<String> unresolved = new ArrayList<>();
        Map<String, String> report = new TreeMap<>();
        for (Found f : found) {
            Result r = allowlist.entries.containsKey(f.name())
                    ? new Result(true, "not code: " + allowlist.entries.get(f.name()))
                    : resolve(f);
            if (!r.resolved()) {
                unresolved.add(f.where() + ": `" + f.span() + "`: " + r.detail());
            }
            report.merge(f.name(), r.detail() + "\t" + f.where(), (a, b) -> a + " " + b.substring(b.indexOf('\t') + 1));
        }
        // what each name resolved to, for a reader who wants to see which names only a library or the JDK holds
        Path out = root.resolve("docs-check/target/docs-names.txt");
        Files.createDirectories(out.getParent());
        List<String> lines = new ArrayList<>();
        report.forEach((name, how) -> lines.add(name + "\t" + how));
        Files.write(out, lines, StandardCharsets.UTF_8);
        assertThat(unresolved).as("names in the docs that name no code of this build, no class of its classpath or the "
                + "JDK, and no path. Write what the code calls it now; if it is not code, add it to " + ALLOWLIST
                + " with where it is defined").isEmpty();
    }

    @Test
    void everyAllowlistEntryIsUsedAndDefined() throws IOException {
        Allowlist allowlist = Allowlist.read(root);
        Set<String> used = new TreeSet<>();
        for (Found f : found) {
            used.add(f.name());
        }
        List<String> problems = new ArrayList<>(allowlist.problems);
        Set<String> kindsUsed = new TreeSet<>();
        allowlist.entries.forEach((name, where) -> {
            if (!used.contains(name)) {
                problems.add(name + ": no doc names it (as code) any more: remove the entry");
            }
            if (allowlist.kinds.containsKey(where)) {
                kindsUsed.add(where);
                return;
            }
            Path file = root.resolve(where).normalize();
            if (!file.startsWith(root) || !Files.isRegularFile(file)) {
                problems.add(name + ": " + where + " is neither a file of the repository nor a declared @kind");
            } else if (!file.getFileName().toString().equals(name) && !contains(file, name)) {
                problems.add(name + ": " + where + " does not contain it");
            }
        });
        for (String kind : allowlist.kinds.keySet()) {
            if (!kindsUsed.contains(kind)) {
                problems.add("@kind " + kind + ": no entry is of this kind: remove it");
            }
        }
        assertThat(problems).as(ALLOWLIST + ": every entry must be used by a doc and resolve to where it is defined")
                .isEmpty();
    }

    private static boolean contains(Path file, String name) {
        try {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8).contains(name);
        } catch (IOException e) {
            return false;
        }
    }

    // ---------------------------------------------------------------------------------------------- resolving

    /** Whether a name resolved; if so, to what (a class and its origin, a package, a path), else why not. */
    record Result(boolean resolved, String detail) {
    }

    static Result resolve(Found f) {
        Matcher m = f.form();
        Pattern p = m.pattern();
        if (p == DIRECTORY) {
            String dir = m.group();
            if (isPath(dir)) {
                return new Result(true, "path");
            }
            List<String> packages = packages(dir.substring(0, dir.length() - 1));
            return packages.isEmpty()
                    ? new Result(false, "no package " + describe(dir) + " in any module, and no such directory")
                    : new Result(true, "package " + String.join(", ", packages));
        }
        String type = m.group(p == SIMPLE ? 1 : 2);
        List<String> members = members(m.group(p == SIMPLE ? 2 : 3));
        boolean prefix = m.group(p == SIMPLE ? 3 : 4) != null;
        String wanted = String.join(".", members) + (prefix ? "…" : "");
        List<String> classes;
        if (p == SIMPLE) {
            classes = index.bySimpleName(type);
            if (classes.isEmpty()) {
                return new Result(false, "no class " + type + " (in the build, its classpath or the JDK)");
            }
        } else if (p == QUALIFIED) {
            String qualified = m.group(1) + type;
            classes = Stream.of(qualified, OWN + qualified).filter(index::exists).toList();
            if (classes.isEmpty()) {
                return new Result(false, "no class " + qualified + " (nor " + OWN + qualified + ")");
            }
        } else {
            // package/Class: a file or directory as written, or a class of a package of the build
            if (isPath(f.name())) {
                return new Result(true, "path");
            }
            String dir = m.group(1);
            dir = dir.replaceFirst("^.*" + ELIDED, ""); // what follows the elision is the package's path
            dir = dir.replaceFirst("^(?:[a-z/]+/)?src/(?:main|test)/java/", "");
            if (members.equals(List.of("java"))) {
                members = List.of(); // metrics/Contract.java: the source file of the class
                wanted = "";
            }
            classes = new ArrayList<>();
            for (String pkg : packages(dir.substring(0, dir.length() - 1))) {
                if (index.exists(pkg + "." + type)) {
                    classes.add(pkg + "." + type);
                }
            }
            if (classes.isEmpty()) {
                return new Result(false, "no class " + type + " in a package " + describe(dir)
                        + " of the build, and no such file");
            }
        }
        String match = chain(classes, members, prefix);
        if (match == null) {
            return new Result(false, "no class " + type + " has " + wanted + " (" + shortList(classes) + ")");
        }
        String last = members.isEmpty() ? null : members.get(members.size() - 1);
        boolean member = last != null && !match.endsWith("$" + last);
        return new Result(true, index.origin(match).name().toLowerCase(Locale.ROOT) + " " + match
                + (member ? "#" + last + (prefix ? "…" : "") : ""));
    }

    /**
     * The class of {@code classes} that has the nested classes and finally the member {@code names} (in that order),
     * or null; with no names, the first class.
     */
    static String chain(List<String> classes, List<String> names, boolean prefix) {
        if (names.isEmpty()) {
            return classes.stream().sorted(DocsNamesTest::buildFirst).findFirst().orElse(null);
        }
        String first = names.get(0);
        List<String> rest = names.subList(1, names.size());
        for (String c : classes.stream().sorted(DocsNamesTest::buildFirst).toList()) {
            String nested = index.nested(c, first);
            if (nested != null) {
                String found = chain(List.of(nested), rest, prefix);
                if (found != null) {
                    return found;
                }
            }
            if (rest.isEmpty() && index.hasMember(c, first, prefix)) {
                return c;
            }
        }
        return null;
    }

    /** The build's classes before the classpath's, then the JDK's. */
    private static int buildFirst(String a, String b) {
        int byOrigin = index.origin(a).compareTo(index.origin(b));
        return byOrigin != 0 ? byOrigin : a.compareTo(b);
    }

    private static String describe(String dir) {
        String dotted = dir.replace('/', '.').replaceFirst("\\.$", "");
        return dotted.startsWith(OWN) ? dotted : OWN + "…" + dotted;
    }

    /** The build's packages named by {@code path} (a/b): dev.llmsidecar.a.b, or any whose name ends with .a.b. */
    static List<String> packages(String path) {
        String dotted = path.replace('/', '.');
        if (dotted.startsWith("dev.llmsidecar")) {
            return index.ownPackages().contains(dotted) ? List.of(dotted) : List.of();
        }
        return index.ownPackages().stream()
                .filter(p -> p.startsWith(OWN) && (p.equals(OWN + dotted) || p.endsWith("." + dotted)))
                .toList();
    }

    /** A file or directory of the repository, from its root or from a module's directory. */
    static boolean isPath(String path) {
        List<Path> bases = new ArrayList<>(List.of(root));
        MODULES.forEach(m -> bases.add(root.resolve(m)));
        return bases.stream().map(b -> b.resolve(path).normalize()).anyMatch(p -> p.startsWith(root) && Files.exists(p));
    }

    private static List<String> members(String chain) {
        return chain == null || chain.isEmpty() ? List.of()
                : Arrays.asList(chain.substring(1).split("[.#]"));
    }

    private static String shortList(List<String> classes) {
        List<String> sorted = classes.stream().sorted().toList();
        return "looked in " + String.join(", ", sorted.subList(0, Math.min(4, sorted.size())))
                + (sorted.size() > 4 ? " and " + (sorted.size() - 4) + " more" : "");
    }

    // -------------------------------------------------------------------------------------------- the allowlist

    /** not-code.txt: {@code @kind NAME justification} lines, then {@code NAME WHERE} entries; # starts a comment. */
    record Allowlist(Map<String, String> kinds, Map<String, String> entries, List<String> problems) {

        static Allowlist read(Path root) throws IOException {
            Map<String, String> kinds = new LinkedHashMap<>();
            Map<String, String> entries = new LinkedHashMap<>();
            List<String> problems = new ArrayList<>();
            List<String> lines = Files.readAllLines(root.resolve(ALLOWLIST), StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i).replaceFirst("(^|\\s)#.*$", "").strip();
                if (line.isEmpty()) {
                    continue;
                }
                Matcher kind = KIND.matcher(line);
                Matcher entry = ALLOWLIST_ENTRY.matcher(line);
                if (kind.matches()) {
                    kinds.put(kind.group(1), kind.group(2));
                } else if (entry.matches()) {
                    if (entries.put(entry.group(1), entry.group(2)) != null) {
                        problems.add("line " + (i + 1) + ": " + entry.group(1) + " is listed twice");
                    }
                } else {
                    problems.add("line " + (i + 1) + ": not `@kind NAME why` nor `NAME WHERE`: " + lines.get(i));
                }
            }
            return new Allowlist(kinds, entries, problems);
        }
    }
}
