package dev.llmsidecar.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.testkit.Repo;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.ConfigMappingInterface;
import io.smallrye.config.ConfigMappings;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import io.smallrye.config.WithParentName;
import java.io.IOException;
import java.io.Reader;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md documents exactly the properties of {@link SidecarConfig}, the one {@code @ConfigMapping}, with
 * their defaults; README.md's configuration table and every {@code sidecar.*} name either document names only
 * properties that exist, with the same defaults. The code is the truth: a disagreement is fixed in the docs.
 *
 * <p>The properties are found by walking the mapping interface reflectively, naming them as SmallRye Config does
 * (the mapping's naming strategy, kebab-case by default; {@code @WithName}, {@code @WithParentName}; a map's key is
 * written {@code <name>} as in the docs), and that walk is itself checked against SmallRye Config's own view of the
 * mapping. A property's default is its {@code @WithDefault}, or the value the shipped application.properties gives it
 * (which wins at run time).
 *
 * <p>A table row documents the {@code sidecar.*} names in the code spans of its first cell: a full name, a name with
 * a brace list ({@code sidecar.slo.objectives.<name>.{ttft,tpot}}), or a short name after a full one, which is its
 * sibling ({@code `sidecar.engine.scrape-interval` / `scrape-timeout`}). Its second cell is one default for all of
 * them or one per name, separated by {@code " / "}; a default written as a code span is a value, which must equal
 * the property's default exactly; anything else ({@code —}, {@code (unset)}, {@code upstream + `/metrics`}) says
 * there is none.
 */
class ConfigurationDocsTest {

    static final Path ROOT = Repo.root();
    static final String PREFIX = "sidecar";

    /** A property of the mapping; {@code defaultValue} null: it has none. */
    record Property(String name, String defaultValue) {
    }

    /** A property as a table row documents it; {@code defaultValue} null: the row says there is none. */
    record Documented(String name, String defaultValue, int line) {
    }

    private static final Pattern NAME_IN_TEXT = Pattern.compile(
            "(?<![\\w.-])" + PREFIX + "\\.[a-z0-9<>*{},._-]*[a-z0-9>*}]");
    private static final Pattern SHORT_NAME = Pattern.compile("[a-z0-9-]+(\\.[a-z0-9-]+)*");

    // ------------------------------------------------------------------------------------------------- the tests

    @Test
    void configurationMdDocumentsExactlyTheMappingsProperties() throws IOException {
        Map<String, Property> mapping = properties();
        String doc = Files.readString(ROOT.resolve("docs/configuration.md"));
        List<String> problems = new ArrayList<>();
        Map<String, Documented> documented = new LinkedHashMap<>();
        for (Documented d : tableRows(doc, problems)) {
            Documented earlier = documented.putIfAbsent(placeholders(d.name()), d);
            if (earlier != null) {
                problems.add("line " + d.line() + ": " + d.name() + " is documented again (first on line "
                        + earlier.line() + ")");
            }
        }
        for (Property p : mapping.values()) {
            if (!documented.containsKey(p.name())) {
                problems.add("missing: " + p.name() + (p.defaultValue() == null ? " (no default)"
                        : " (default `" + p.defaultValue() + "`)")
                        + " is a property of SidecarConfig, not in the table");
            }
        }
        problems.addAll(agreement(documented.values(), mapping));
        problems.addAll(namesInText(doc, mapping, documented.values()));
        assertNoDisagreement("docs/configuration.md", problems);
    }

    @Test
    void readmeConfigurationTableAgreesWithTheMapping() throws IOException {
        Map<String, Property> mapping = properties();
        String readme = Files.readString(ROOT.resolve("README.md"));
        List<String> problems = new ArrayList<>();
        List<Documented> rows = tableRows(readme, problems);
        assertThat(rows).as("README.md's configuration table documents sidecar.* properties").isNotEmpty();
        problems.addAll(agreement(rows, mapping));
        problems.addAll(namesInText(readme, mapping, rows));
        assertNoDisagreement("README.md", problems);
    }

    /** The reflective walk names what SmallRye Config itself finds in the mapping, with the same defaults. */
    @Test
    void theWalkSeesTheMappingAsSmallRyeConfigDoes() {
        Map<String, String> smallRye = new TreeMap<>();
        ConfigMappings.getProperties(ConfigMappings.ConfigClass.configClass(SidecarConfig.class, PREFIX))
                .forEach((name, p) -> {
                    if (!name.endsWith("[*]")) { // a list's elements, beside the list itself
                        smallRye.put(name.replace(".*.", ".<name>."), defaultOf(p));
                    }
                });
        Map<String, String> walked = new TreeMap<>();
        walk(SidecarConfig.class, PREFIX, strategy()).forEach(p -> walked.put(p.name(), p.defaultValue()));
        assertThat(walked).isEqualTo(smallRye);
    }

    private static String defaultOf(ConfigMappingInterface.Property p) {
        return p.hasDefaultValue() ? p.getDefaultValue() : null;
    }

    private static void assertNoDisagreement(String doc, List<String> problems) {
        if (!problems.isEmpty()) {
            fail(problems.size() + " disagreement(s) between " + doc + " and SidecarConfig (the code is the truth"
                    + " for names and defaults; fix the doc):\n  " + String.join("\n  ", problems));
        }
    }

    // ------------------------------------------------------------------------------------------- the mapping

    /** Every property of the mapping by name, with its default as the shipped application.properties leaves it. */
    static Map<String, Property> properties() throws IOException {
        Properties shipped = new Properties();
        try (Reader r = Files.newBufferedReader(ROOT.resolve("sidecar/src/main/resources/application.properties"))) {
            shipped.load(r);
        }
        Map<String, Property> byName = new TreeMap<>();
        for (Property p : walk(SidecarConfig.class, PREFIX, strategy())) {
            byName.put(p.name(), new Property(p.name(), shipped.getProperty(p.name(), p.defaultValue())));
        }
        for (String key : shipped.stringPropertyNames()) {
            if (key.startsWith(PREFIX + ".") && !byName.containsKey(key)) {
                throw new AssertionError("application.properties sets " + key + ", which the mapping does not have");
            }
        }
        return byName;
    }

    private static ConfigMapping.NamingStrategy strategy() {
        return SidecarConfig.class.getAnnotation(ConfigMapping.class).namingStrategy();
    }

    /** The properties under {@code prefix} of the mapping interface {@code type}. */
    static List<Property> walk(Class<?> type, String prefix, ConfigMapping.NamingStrategy naming) {
        List<Property> found = new ArrayList<>();
        for (Method m : type.getMethods()) {
            if (m.isDefault() || Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            String name;
            if (m.isAnnotationPresent(WithParentName.class)) {
                name = prefix;
            } else {
                WithName withName = m.getAnnotation(WithName.class);
                name = prefix + "." + (withName != null ? withName.value() : naming.apply(m.getName()));
            }
            WithDefault withDefault = m.getAnnotation(WithDefault.class);
            property(m.getGenericReturnType(), name, withDefault == null ? null : withDefault.value(), naming, found,
                    m);
        }
        return found;
    }

    private static void property(Type type, String name, String defaultValue, ConfigMapping.NamingStrategy naming,
            List<Property> found, Method where) {
        Class<?> raw = raw(type);
        if (raw == Optional.class) {
            property(argument(type, 0), name, defaultValue, naming, found, where);
        } else if (Map.class.isAssignableFrom(raw)) {
            property(argument(type, 1), name + ".<name>", defaultValue, naming, found, where);
        } else if (Collection.class.isAssignableFrom(raw)) {
            if (group(raw(argument(type, 0)))) {
                throw new AssertionError(where + ": a list of groups; teach the walk (and the docs) its indexed names");
            }
            found.add(new Property(name, defaultValue));
        } else if (group(raw)) {
            found.addAll(walk(raw, name, naming));
        } else {
            found.add(new Property(name, defaultValue));
        }
    }

    /** A config group: an interface of the application, not a value type such as List or a JDK interface. */
    private static boolean group(Class<?> c) {
        return c.isInterface() && !c.getName().startsWith("java.");
    }

    private static Class<?> raw(Type t) {
        return t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) t;
    }

    private static Type argument(Type t, int i) {
        return ((ParameterizedType) t).getActualTypeArguments()[i];
    }

    // ---------------------------------------------------------------------------------------------- the docs

    /** The sidecar.* properties the table rows of {@code markdown} document, with their documented defaults. */
    static List<Documented> tableRows(String markdown, List<String> problems) {
        List<Documented> rows = new ArrayList<>();
        for (Markdown.Unit unit : Markdown.parse(markdown).units()) {
            if (!unit.tableRow()) {
                continue;
            }
            List<String> cells = Markdown.cells(unit.text());
            List<String> names = namesOfCell(cells.get(0));
            if (names.isEmpty()) {
                continue;
            }
            List<String> defaults = cells.size() < 2 ? List.of("") : splitDefaults(cells.get(1));
            if (defaults.size() != 1 && defaults.size() != names.size()) {
                problems.add("line " + unit.line() + ": " + defaults.size() + " defaults (" + cells.get(1) + ") for "
                        + names.size() + " properties " + names + "; give one for all, or one per property");
                continue;
            }
            for (int i = 0; i < names.size(); i++) {
                rows.add(new Documented(names.get(i), value(defaults.get(defaults.size() == 1 ? 0 : i)),
                        unit.line()));
            }
        }
        return rows;
    }

    /** The names of a first cell: full names (brace lists expanded) and the short siblings that follow one. */
    static List<String> namesOfCell(String cell) {
        List<String> names = new ArrayList<>();
        String parent = null;
        for (String span : Markdown.codeSpans(cell)) {
            String s = span.strip();
            if (s.startsWith(PREFIX + ".")) {
                List<String> expanded = expandBraces(s);
                names.addAll(expanded);
                parent = expanded.get(0).substring(0, expanded.get(0).lastIndexOf('.'));
            } else if (parent != null && SHORT_NAME.matcher(s).matches()) {
                names.add(parent + "." + s);
            } else {
                parent = null; // another namespace (quarkus.*): what follows is not a sidecar property
            }
        }
        return names;
    }

    static List<String> expandBraces(String name) {
        int open = name.indexOf('{');
        if (open < 0) {
            return List.of(name);
        }
        int close = name.indexOf('}', open);
        List<String> out = new ArrayList<>();
        for (String choice : name.substring(open + 1, close).split(",")) {
            out.addAll(expandBraces(name.substring(0, open) + choice.strip() + name.substring(close + 1)));
        }
        return out;
    }

    /** A default cell split at " / " outside parentheses and code spans: "`PT5S` / `PT2S`" is two defaults. */
    static List<String> splitDefaults(String cell) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        boolean code = false;
        int from = 0;
        for (int i = 0; i < cell.length(); i++) {
            char c = cell.charAt(i);
            if (c == '`') {
                code = !code;
            } else if (!code && c == '(') {
                depth++;
            } else if (!code && c == ')') {
                depth--;
            } else if (!code && depth == 0 && cell.startsWith(" / ", i)) {
                parts.add(cell.substring(from, i).strip());
                from = i + 3;
            }
        }
        parts.add(cell.substring(from).strip());
        return parts;
    }

    /** The value a default cell states: its leading code span; null when it starts otherwise (there is none). */
    static String value(String defaultCell) {
        String d = defaultCell.strip();
        if (!d.startsWith("`")) {
            return null;
        }
        List<String> spans = Markdown.codeSpans(d);
        return spans.isEmpty() ? null : spans.get(0);
    }

    /** Where the documented names and defaults disagree with the mapping. */
    static List<String> agreement(Collection<Documented> documented, Map<String, Property> mapping) {
        List<String> problems = new ArrayList<>();
        for (Documented d : documented) {
            Property p = mapping.get(placeholders(d.name()));
            if (p == null) {
                problems.add("line " + d.line() + ": " + d.name() + " is not a property of SidecarConfig");
            } else if (p.defaultValue() == null && d.defaultValue() != null) {
                problems.add("line " + d.line() + ": " + d.name() + " documents the default `" + d.defaultValue()
                        + "`; the property has none");
            } else if (p.defaultValue() != null && d.defaultValue() == null) {
                problems.add("line " + d.line() + ": " + d.name() + " documents no default value; the default is `"
                        + p.defaultValue() + "`");
            } else if (p.defaultValue() != null && !p.defaultValue().equals(d.defaultValue())) {
                problems.add("line " + d.line() + ": " + d.name() + " documents the default `" + d.defaultValue()
                        + "`; the default is `" + p.defaultValue() + "`");
            }
        }
        return problems;
    }

    /**
     * Every sidecar.* name in the code spans and code blocks of {@code markdown}, in prose and tables alike, names
     * a property of the mapping, or (ending in {@code .*}) a group of them; a map key may be a placeholder or a real
     * key ({@code sidecar.slo.objectives.interactive.ttft}). The names {@code rows} document are left to
     * {@link #agreement}, which reports them already.
     */
    static List<String> namesInText(String markdown, Map<String, Property> mapping, Collection<Documented> rows) {
        Markdown.Doc doc = Markdown.parse(markdown);
        Map<Integer, List<String>> code = new TreeMap<>();
        for (Markdown.Unit u : doc.units()) {
            for (Markdown.Span s : Markdown.spans(u.text())) {
                code.computeIfAbsent(u.line() + s.lineOffset(), l -> new ArrayList<>()).add(s.text());
            }
        }
        for (Markdown.Block b : doc.blocks()) {
            for (int i = 0; i < b.lines().size(); i++) {
                code.computeIfAbsent(b.line() + 1 + i, l -> new ArrayList<>()).add(b.lines().get(i));
            }
        }
        Set<String> inRows = new HashSet<>();
        rows.forEach(d -> inRows.add(d.name()));
        List<String> problems = new ArrayList<>();
        code.forEach((line, texts) -> {
            for (String text : texts) {
                Matcher m = NAME_IN_TEXT.matcher(text);
                while (m.find()) {
                    for (String name : expandBraces(m.group())) {
                        if (!inRows.contains(name) && !known(name, mapping)) {
                            problems.add("line " + line + ": " + name + " is no property of SidecarConfig");
                        }
                    }
                }
            }
        });
        return problems;
    }

    private static boolean known(String name, Map<String, Property> mapping) {
        String[] doc = name.split("\\.");
        boolean group = name.endsWith(".*");
        for (String property : mapping.keySet()) {
            String[] p = property.split("\\.");
            int n = group ? doc.length - 1 : doc.length;
            if (group ? p.length <= n : p.length != n) {
                continue;
            }
            boolean same = true;
            for (int i = 0; i < n && same; i++) {
                same = p[i].equals(doc[i]) || p[i].equals("<name>") && !doc[i].equals("*");
            }
            if (same) {
                return true;
            }
        }
        return false;
    }

    /** Any placeholder for a map key ({@code <name>}, {@code <objective>}) as the walk writes it. */
    static String placeholders(String name) {
        return name.replaceAll("<[^>.]+>", "<name>");
    }
}
