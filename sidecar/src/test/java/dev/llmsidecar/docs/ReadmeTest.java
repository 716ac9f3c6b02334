package dev.llmsidecar.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.llmsidecar.testkit.Repo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What README.md tells a reader to open or run exists: every repository path it names (link targets, paths in code
 * spans and code blocks), every repository script a command of it starts with (existing and executable), and every
 * {@code --flag} it gives one of those scripts (one the script, or the Java program it runs, accepts).
 *
 * <p>Paths are read from the repository's root, as the README's links and commands are. A path in prose or in a
 * layout block may also be relative to a directory named in the same paragraph, list item or (for a block) the
 * paragraph before it ("Only {@code sidecar} ships; the image copies its {@code target/quarkus-app}"), and an entry
 * of a layout block ({@code openai/}) to the entry it is listed under ({@code wire/}). A path through a {@code target/}
 * directory is a build output, checked against what that module's build writes (a Quarkus application module:
 * {@code target/quarkus-app/quarkus-run.jar} and the rest of {@code target/quarkus-app}), never against the disk: the
 * root is an aggregator and builds no {@code target/quarkus-app}, whatever an old checkout holds there. A command
 * (a line of a shell block) runs at the root: its paths are read from there only.
 */
class ReadmeTest {

    static final Path ROOT = Repo.root();

    /** Where a piece of README code is: a code span in prose, a line of a shell block, a line of another block. */
    enum Kind { SPAN, SHELL, BLOCK }

    /**
     * A piece of README code: its text, the line it is on, the directories it may be relative to besides the root,
     * its kind and the heading of its section.
     */
    record Code(String text, int line, List<String> bases, Kind kind, String section) {

        boolean shell() {
            return kind == Kind.SHELL;
        }
    }

    private static final Pattern PATH = Pattern.compile("(\\./)?\\.?[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_.*-]+)*/?");
    private static final Pattern FLAG = Pattern.compile("(?<![\\w-])--[a-z][a-z0-9-]*");
    private static final Pattern FLAG_LITERAL = Pattern.compile("\"(--[a-z][a-z0-9-]*)=?\"");
    private static final Pattern JAVA_CLASS = Pattern.compile("\\bdev\\.llmsidecar(?:\\.[a-z0-9]+)+\\.[A-Z]\\w*");
    private static final Pattern ENV_ASSIGNMENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*=.*");

    private final Markdown.Doc readme = Markdown.parse(read(ROOT.resolve("README.md")));
    private final Set<String> topLevel = topLevel();

    // ------------------------------------------------------------------------------------------------- the tests

    @Test
    void everyPathItNamesExists() {
        List<String> problems = new ArrayList<>();
        for (Markdown.Unit u : readme.units()) {
            for (Markdown.Span link : Markdown.linkTargets(u.text())) {
                String target = link.text();
                if (!target.contains(":") && !target.startsWith("#")) {
                    String path = target.replaceFirst("#.*$", "");
                    problem(u.line() + link.lineOffset(), "link", path, List.of()).ifPresent(problems::add);
                }
            }
        }
        for (Code c : code()) {
            for (String token : pathTokens(c.text())) {
                if (candidate(token, c)) {
                    problem(c.line(), c.shell() ? "command" : "code", token, c.shell() ? List.of() : c.bases())
                            .ifPresent(problems::add);
                }
            }
        }
        for (Code entry : layoutEntries()) {
            problem(entry.line(), "layout entry", entry.text(), entry.bases()).ifPresent(problems::add);
        }
        assertNone("README.md names paths that do not exist", problems);
    }

    @Test
    void everyScriptItsCommandsRunIsThereAndExecutable() {
        List<String> problems = new ArrayList<>();
        int commands = 0;
        for (Code c : code()) {
            if (c.kind() == Kind.BLOCK || c.kind() == Kind.SPAN && c.text().strip().split("\\s+").length < 2) {
                continue; // a layout line, or a lone path in prose: paths (checked above), not commands
            }
            for (List<String> command : commands(c.text())) {
                Script s = script(command);
                if (s == null) {
                    continue;
                }
                commands++;
                Path file = ROOT.resolve(s.path());
                if (!Files.isRegularFile(file)) {
                    problems.add("line " + c.line() + ": " + String.join(" ", command) + ": no script " + s.path());
                } else if (!s.viaShell() && !Files.isExecutable(file)) {
                    problems.add("line " + c.line() + ": " + String.join(" ", command) + ": " + s.path()
                            + " is not executable");
                }
            }
        }
        assertThat(commands).as("commands of README.md that run a repository script").isPositive();
        assertNone("README.md runs scripts that are not there", problems);
    }

    @Test
    void everyFlagItGivesAScriptIsOneItAccepts() {
        Map<String, Set<String>> accepted = new LinkedHashMap<>();
        for (String script : scriptsNamed()) {
            accepted.put(script, acceptedFlags(script));
        }
        assertThat(accepted).as("scripts README.md runs").containsKeys("bin/demo", "bin/sweep", "bench/run");
        List<String> problems = new ArrayList<>();
        Map<String, Set<String>> toolsBySection = new LinkedHashMap<>();
        int flags = 0;
        for (Code c : code()) {
            for (Map.Entry<String, List<String>> given : flagsGiven(c.text(), accepted.keySet()).entrySet()) {
                toolsBySection.computeIfAbsent(c.section(), s -> new TreeSet<>()).add(given.getKey());
                for (String flag : given.getValue()) {
                    flags++;
                    if (!accepted.get(given.getKey()).contains(flag)) {
                        problems.add("line " + c.line() + ": " + given.getKey() + " " + flag + ": not an option of "
                                + given.getKey() + " (it accepts " + accepted.get(given.getKey()) + ")");
                    }
                }
            }
        }
        // a flag on its own in prose (`--incident-after=600`): one of the scripts its section runs takes it
        for (Markdown.Unit u : readme.units()) {
            for (Markdown.Span span : Markdown.spans(u.text())) {
                Matcher m = FLAG.matcher(span.text());
                if (span.text().startsWith("--") && m.lookingAt()) {
                    Set<String> tools = toolsBySection.getOrDefault(u.section(), Set.of());
                    if (tools.stream().noneMatch(t -> accepted.get(t).contains(m.group()))) {
                        problems.add("line " + (u.line() + span.lineOffset()) + ": `" + span.text()
                                + "`: no script run in section \"" + u.section() + "\" " + tools + " accepts "
                                + m.group());
                    }
                }
            }
        }
        assertThat(flags).as("flags README.md gives its scripts").isPositive();
        assertNone("README.md gives scripts options they do not have", problems);
    }

    private static void assertNone(String what, List<String> problems) {
        if (!problems.isEmpty()) {
            fail(what + " (" + problems.size() + "):\n  " + String.join("\n  ", problems));
        }
    }

    // --------------------------------------------------------------------------------------------- the README's code

    /** Every code span (prose) and every logical line of a code block, with where its paths may be relative to. */
    List<Code> code() {
        List<Code> code = new ArrayList<>();
        for (Markdown.Unit u : readme.units()) {
            List<String> bases = dirsNamed(u);
            for (Markdown.Span span : Markdown.spans(u.text())) {
                code.add(new Code(span.text(), u.line() + span.lineOffset(), bases, Kind.SPAN, u.section()));
            }
        }
        for (Markdown.Block b : readme.blocks()) {
            List<String> bases = b.before() == null ? List.of() : dirsNamed(b.before());
            List<String> lines = b.lines();
            for (int i = 0; i < lines.size(); i++) {
                int first = i;
                StringBuilder logical = new StringBuilder(lines.get(i).strip());
                while (b.shell() && logical.toString().endsWith("\\") && i + 1 < lines.size()) {
                    logical.setLength(logical.length() - 1);
                    logical.append(' ').append(lines.get(++i).strip());
                }
                code.add(new Code(logical.toString(), b.line() + first + 1, bases, b.shell() ? Kind.SHELL : Kind.BLOCK,
                        b.section()));
            }
        }
        return code;
    }

    /** Directories of the repository a unit names (in code spans or links), which its relative paths may start at. */
    private List<String> dirsNamed(Markdown.Unit u) {
        List<String> dirs = new ArrayList<>();
        List<String> named = new ArrayList<>(Markdown.codeSpans(u.text()));
        Markdown.linkTargets(u.text()).forEach(link -> named.add(link.text()));
        for (String n : named) {
            String d = trimSlash(n.strip());
            if (PATH.matcher(d).matches() && !d.contains("/target") && !d.startsWith("target")
                    && Files.isDirectory(ROOT.resolve(d))) {
                dirs.add(d);
            }
        }
        return dirs;
    }

    /**
     * The entries of the layout blocks (code blocks without a language whose outermost lines each start with a
     * directory, {@code sidecar/   what runs in the pod}), and the directories named below them, each with the
     * directories it may be relative to: the block's bases, then its entry.
     */
    List<Code> layoutEntries() {
        List<Code> entries = new ArrayList<>();
        for (Markdown.Block b : readme.blocks()) {
            List<String> lines = b.lines().stream().filter(l -> !l.isBlank()).toList();
            if (b.shell() || !b.info().isEmpty() || lines.isEmpty()) {
                continue;
            }
            int indent = lines.stream().mapToInt(ReadmeTest::indent).min().orElse(0);
            if (!lines.stream().filter(l -> indent(l) == indent)
                    .allMatch(l -> l.strip().split("\\s+")[0].endsWith("/"))) {
                continue;
            }
            List<String> bases = new ArrayList<>(b.before() == null ? List.of() : dirsNamed(b.before()));
            List<String> entryBases = List.of();
            for (int i = 0; i < b.lines().size(); i++) {
                String line = b.lines().get(i);
                if (line.isBlank()) {
                    continue;
                }
                int lineNo = b.line() + i + 1;
                List<String> words = new ArrayList<>(List.of(line.strip().split("\\s+")));
                if (indent(line) == indent) {
                    String entry = words.remove(0);
                    entries.add(new Code(entry, lineNo, bases, Kind.BLOCK, b.section()));
                    entryBases = new ArrayList<>();
                    for (String base : withRoot(bases)) {
                        String dir = join(base, trimSlash(entry));
                        if (Files.isDirectory(ROOT.resolve(dir))) {
                            entryBases.add(dir);
                        }
                    }
                    entryBases.addAll(bases);
                }
                for (String w : words) {
                    String token = strip(w);
                    if (token.endsWith("/") && !token.startsWith("/") && PATH.matcher(token).matches()) {
                        entries.add(new Code(token, lineNo, entryBases, Kind.BLOCK, b.section()));
                    }
                }
            }
        }
        return entries;
    }

    /** Words of {@code text} that look like relative paths ({@code --out=dir/x} gives dir/x, {@code @f/g} f/g). */
    static List<String> pathTokens(String text) {
        List<String> tokens = new ArrayList<>();
        for (String w : text.split("[\\s,;|]+")) {
            String t = strip(w);
            t = t.substring(t.lastIndexOf('=') + 1);
            if (t.startsWith("@")) {
                t = t.substring(1); // a java argument file
            }
            t = t.replaceAll("\\.+$", "");
            if (t.contains("/") && !t.startsWith("/") && PATH.matcher(t).matches()) {
                tokens.add(t);
            }
        }
        return tokens;
    }

    /**
     * Whether a path-like token of {@code c} is meant as a repository path: it starts at a top-level entry of the
     * repository or at {@code target/}, or (not in a command) at a directory under one of the bases.
     * {@code meta-llama/Llama-3.1-8B-Instruct}, {@code http/protobuf} or {@code pod/x} are not.
     */
    boolean candidate(String token, Code c) {
        String first = token.replaceFirst("^\\./", "").split("/")[0];
        if (topLevel.contains(first) || first.equals("target") || token.startsWith("./")) {
            return true;
        }
        return !c.shell() && c.bases().stream().anyMatch(b -> Files.exists(ROOT.resolve(join(b, first))));
    }

    // ------------------------------------------------------------------------------------------------- paths

    /** Why {@code path} (from the root, or else from one of {@code bases}) is not in the repository, if it is not. */
    Optional<String> problem(int line, String where, String path, List<String> bases) {
        String p = trimSlash(path.replaceFirst("^\\./", ""));
        List<String> why = new ArrayList<>();
        for (String base : withRoot(bases)) {
            String rel = join(base, p);
            String outputProblem = buildOutputProblem(rel);
            if (isBuildOutput(rel) ? outputProblem == null : exists(rel)) {
                return Optional.empty();
            }
            if (outputProblem != null) {
                why.add(outputProblem);
            }
        }
        String from = bases.isEmpty() ? "" : " (tried from the root and from " + bases + ")";
        return Optional.of("line " + line + ": " + where + " path " + path + " does not exist" + from
                + (why.isEmpty() ? "" : ": " + String.join("; ", why)));
    }

    private static boolean exists(String rel) {
        int glob = rel.indexOf('*');
        if (glob >= 0) {
            String dir = rel.substring(0, Math.max(0, rel.lastIndexOf('/', glob)));
            return Files.isDirectory(ROOT.resolve(dir));
        }
        return Files.exists(ROOT.resolve(rel));
    }

    static boolean isBuildOutput(String rel) {
        return List.of(rel.split("/")).contains("target");
    }

    /**
     * Null when the build writes {@code rel} (a path through a module's {@code target/}), else why not: the module
     * has no POM, is an aggregator (packaging pom), or writes no such thing; naming the modules that do.
     */
    static String buildOutputProblem(String rel) {
        if (!isBuildOutput(rel)) {
            return null;
        }
        List<String> segments = List.of(rel.split("/"));
        int at = segments.indexOf("target");
        String module = String.join("/", segments.subList(0, at));
        String output = String.join("/", segments.subList(at + 1, segments.size()));
        String name = module.isEmpty() ? "the root" : module + "/";
        Path pom = ROOT.resolve(module).resolve("pom.xml");
        String problem;
        if (!Files.isRegularFile(pom)) {
            problem = name + " is no Maven module";
        } else if (outputs(module).isEmpty()) {
            problem = name + " is an aggregator (packaging pom): its build writes nothing under target/";
        } else if (!writes(module, output)) {
            problem = "the build of " + name + " writes no target/" + output;
        } else {
            return null;
        }
        List<String> writers = modules().stream().filter(m -> writes(m, output)).map(m -> m + "/target/" + output)
                .toList();
        return rel + ": " + problem + (writers.isEmpty() ? "" : " (built: " + String.join(", ", writers) + ")");
    }

    private static boolean writes(String module, String output) {
        for (String o : outputs(module)) {
            if (output.equals(o) || o.endsWith("/") && output.startsWith(o) || output.isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /**
     * What a module's build writes under target/ that a reader may be pointed at: nothing for an aggregator; the
     * classes; for a module with the Quarkus plugin's build goal, the fast-jar application (quarkus-run.jar and the
     * directories beside it, which is what the image copies). Entries ending in / hold anything below them.
     */
    static List<String> outputs(String module) {
        Path pom = ROOT.resolve(module).resolve("pom.xml");
        if (!Files.isRegularFile(pom)) {
            return List.of();
        }
        String text = read(pom);
        if (text.matches("(?s).*<packaging>\\s*pom\\s*</packaging>.*")) {
            return List.of();
        }
        List<String> outputs = new ArrayList<>(List.of("classes", "classes/", "test-classes", "test-classes/"));
        if (text.contains("<artifactId>quarkus-maven-plugin</artifactId>") && text.contains("<goal>build</goal>")) {
            outputs.addAll(List.of("quarkus-app", "quarkus-app/quarkus-run.jar", "quarkus-app/lib/",
                    "quarkus-app/app/", "quarkus-app/quarkus/"));
        }
        return outputs;
    }

    /** The modules of the root POM. */
    static List<String> modules() {
        List<String> modules = new ArrayList<>();
        Matcher m = Pattern.compile("<module>\\s*([^<\\s]+)\\s*</module>").matcher(read(ROOT.resolve("pom.xml")));
        while (m.find()) {
            modules.add(trimSlash(m.group(1)));
        }
        return modules;
    }

    // ------------------------------------------------------------------------------------------------- commands

    /** A repository script a command runs; {@code viaShell}: as {@code bash script}, so it need not be executable. */
    record Script(String path, boolean viaShell) {
    }

    /** The commands of a line of shell: words (quotes removed), split at unquoted ;, &&, || and |; no comments. */
    static List<List<String>> commands(String line) {
        List<List<String>> commands = new ArrayList<>();
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                word = word == null ? new StringBuilder() : word;
            } else if (c == '#' && word == null) {
                break;
            } else if (Character.isWhitespace(c) || c == ';' || c == '|' || c == '&') {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
                if (c != ' ' && c != '\t' && !words.isEmpty()) {
                    commands.add(words);
                    words = new ArrayList<>();
                }
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        if (word != null) {
            words.add(word.toString());
        }
        if (!words.isEmpty()) {
            commands.add(words);
        }
        return commands;
    }

    /** The repository script {@code command} runs (after NAME=value words; {@code bash x}: x), or null: a program. */
    static Script script(List<String> command) {
        int i = 0;
        while (i < command.size() && ENV_ASSIGNMENT.matcher(command.get(i)).matches()) {
            i++;
        }
        if (i >= command.size()) {
            return null;
        }
        boolean viaShell = command.get(i).equals("bash") || command.get(i).equals("sh");
        if (viaShell && ++i >= command.size()) {
            return null;
        }
        String word = command.get(i);
        boolean relativePath = word.contains("/") && !word.startsWith("/") && !word.startsWith("~")
                && !word.startsWith("$") && !word.contains(":");
        return relativePath ? new Script(word.replaceFirst("^\\./", ""), viaShell) : null;
    }

    /** Every executable script of the repository the README names. */
    Set<String> scriptsNamed() {
        Set<String> scripts = new TreeSet<>();
        for (Code c : code()) {
            for (String token : pathTokens(c.text())) {
                Path f = ROOT.resolve(token);
                if (!isBuildOutput(token) && Files.isRegularFile(f) && Files.isExecutable(f)) {
                    scripts.add(token);
                }
            }
        }
        return scripts;
    }

    /**
     * The --flags given to each script in {@code text}: the words after its name up to the end of its command (an
     * unquoted ;, &&, ||, |, a closing parenthesis not its own, or the next script), the comment of its line
     * included ({@code bin/demo --incident   # ... (--incident-after=S)}).
     */
    static Map<String, List<String>> flagsGiven(String text, Set<String> scripts) {
        Map<String, List<String>> given = new LinkedHashMap<>();
        String alternatives = String.join("|", scripts.stream().map(Pattern::quote).toList());
        Matcher m = Pattern.compile("(?<![\\w./-])(?:\\./)?(" + alternatives + ")(?![\\w/.-])").matcher(text);
        List<int[]> at = new ArrayList<>();
        List<String> which = new ArrayList<>();
        while (m.find()) {
            at.add(new int[] {m.start(), m.end()});
            which.add(m.group(1));
        }
        for (int k = 0; k < at.size(); k++) {
            int end = k + 1 < at.size() ? at.get(k + 1)[0] : text.length();
            String args = text.substring(at.get(k)[1], end);
            int depth = 0;
            for (int i = 0; i < args.length(); i++) {
                char c = args.charAt(i);
                depth += c == '(' ? 1 : c == ')' ? -1 : 0;
                if (depth < 0 || c == ';' || c == '|' || args.startsWith("&&", i)) {
                    args = args.substring(0, i);
                    break;
                }
            }
            Matcher f = FLAG.matcher(args);
            List<String> flags = given.computeIfAbsent(which.get(k), s -> new ArrayList<>());
            while (f.find()) {
                flags.add(f.group());
            }
        }
        return given;
    }

    /**
     * The options {@code script} accepts: the flags its own parsing compares with (quoted: {@code "--jmh"}), and
     * those of the Java program it runs (the string literals {@code "--quick"}, {@code "--incident-after="} of the
     * package of each dev.llmsidecar class it names, where that program's option parsing lives).
     */
    static Set<String> acceptedFlags(String script) {
        String text = read(ROOT.resolve(script));
        Set<String> flags = new TreeSet<>(literalFlags(text));
        Matcher m = JAVA_CLASS.matcher(text);
        while (m.find()) {
            String pkg = m.group().substring(0, m.group().lastIndexOf('.')).replace('.', '/');
            List<Path> dirs = modules().stream().map(mod -> ROOT.resolve(mod).resolve("src/main/java").resolve(pkg))
                    .filter(Files::isDirectory).toList();
            assertThat(dirs).as(script + " runs " + m.group() + ": its sources").isNotEmpty();
            for (Path dir : dirs) {
                try (Stream<Path> files = Files.list(dir)) {
                    files.filter(f -> f.toString().endsWith(".java")).forEach(f -> flags.addAll(literalFlags(read(f))));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return flags;
    }

    private static Set<String> literalFlags(String source) {
        Set<String> flags = new LinkedHashSet<>();
        Matcher m = FLAG_LITERAL.matcher(source);
        while (m.find()) {
            flags.add(m.group(1));
        }
        return flags;
    }

    // ------------------------------------------------------------------------------------------------- helpers

    private static Set<String> topLevel() {
        try (Stream<Path> entries = Files.list(ROOT)) {
            Set<String> names = new TreeSet<>();
            entries.map(p -> p.getFileName().toString()).filter(n -> !n.equals("target") && !n.equals(".git"))
                    .forEach(names::add);
            return names;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<String> withRoot(List<String> bases) {
        List<String> all = new ArrayList<>();
        all.add("");
        all.addAll(bases);
        return all;
    }

    private static String join(String base, String path) {
        return base.isEmpty() ? path : trimSlash(base) + "/" + path;
    }

    private static String trimSlash(String s) {
        return s.replaceAll("/+$", "");
    }

    private static int indent(String line) {
        return line.length() - line.stripLeading().length();
    }

    /** A word without the quotes, brackets and punctuation prose puts around it. */
    private static String strip(String word) {
        return word.replaceAll("^[\"'(\\[<{`]+", "").replaceAll("[\"')\\]>},;:`]+$", "");
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
