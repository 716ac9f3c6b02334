package dev.llmsidecar.docscheck;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;

/**
 * Every class the docs may name, by binary name ({@code dev.llmsidecar.proxy.UpstreamConnection$Owner}) and by simple
 * name ({@code Owner}; a nested class is found by its own name too): the build's own classes (each module's
 * {@code target/classes} and {@code target/test-classes}), every class of the jars and directories on the test
 * classpath, and the JDK's ({@code jrt:/}).
 *
 * <p>Members are read from the class files themselves (the constant pool, then the names of the fields and methods),
 * never by loading a class: nothing is initialised or linked, and a test class whose signatures name a library that
 * only its own module's tests have (ArchUnit, Jazzer) is read as well as any other. A field is a field, an enum
 * constant or a record component; a method is a method or a record component's accessor; a nested class is a class
 * whose binary name is the outer one's plus {@code $} and its name. A member is found in the class or in one of its
 * supertypes, as Java finds it.
 */
final class ClassIndex {

    /** Where the bytes of one class file are. */
    private interface Source {
        byte[] read() throws IOException;
    }

    /** Where a class comes from. */
    enum Origin { BUILD, CLASSPATH, JDK }

    /** What one class file declares: its supertypes and the names of its fields and methods. */
    record ClassInfo(String name, List<String> supertypes, Set<String> members) {
    }

    private final Map<String, Source> classes = new HashMap<>();
    private final Map<String, Origin> origins = new HashMap<>();
    private final Map<String, List<String>> bySimpleName = new HashMap<>();
    private final Set<String> ownPackages = new TreeSet<>();
    private final Map<String, ClassInfo> read = new HashMap<>();
    private final List<JarFile> jars = new ArrayList<>();

    /**
     * @param ownClassDirs the build's compiled classes, whose packages are the packages a doc may name
     * @param classpath the test classpath: jars and directories
     */
    ClassIndex(List<Path> ownClassDirs, List<Path> classpath) throws IOException {
        for (Path dir : ownClassDirs) {
            addDirectory(dir, Origin.BUILD);
        }
        for (Path entry : classpath) {
            if (Files.isDirectory(entry)) {
                addDirectory(entry, Origin.CLASSPATH);
            } else if (Files.isRegularFile(entry) && entry.toString().endsWith(".jar")) {
                addJar(entry);
            }
        }
        addJdk();
        for (String binary : classes.keySet()) {
            for (String simple : simpleNames(binary)) {
                bySimpleName.computeIfAbsent(simple, k -> new ArrayList<>()).add(binary);
            }
        }
    }

    /** The test classpath: {@code java.class.path}, with the {@code Class-Path} of the manifests of its jars. */
    static List<Path> testClasspath() throws IOException {
        Set<Path> entries = new LinkedHashSet<>();
        for (String property : List.of("java.class.path", "surefire.test.class.path")) {
            String value = System.getProperty(property);
            if (value != null && !value.isBlank()) {
                for (String e : value.split(File.pathSeparator)) {
                    addWithManifest(Path.of(e).toAbsolutePath().normalize(), entries);
                }
            }
        }
        return List.copyOf(entries);
    }

    private static void addWithManifest(Path entry, Set<Path> entries) throws IOException {
        if (!entries.add(entry) || !Files.isRegularFile(entry) || !entry.toString().endsWith(".jar")) {
            return;
        }
        // surefire's booter jar names the whole test classpath in its manifest
        try (JarFile jar = new JarFile(entry.toFile())) {
            Manifest manifest = jar.getManifest();
            String classPath = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
            if (classPath != null) {
                for (String url : classPath.trim().split("\\s+")) {
                    URI uri = entry.toUri().resolve(url);
                    if ("file".equals(uri.getScheme())) {
                        addWithManifest(Path.of(uri).normalize(), entries);
                    }
                }
            }
        }
    }

    /** The binary names of the classes with this simple name (a nested class's own name included). */
    List<String> bySimpleName(String simple) {
        return bySimpleName.getOrDefault(simple, List.of());
    }

    Origin origin(String binary) {
        return origins.get(binary);
    }

    boolean exists(String binary) {
        return classes.containsKey(binary);
    }

    /** The packages of the build's own classes, e.g. {@code dev.llmsidecar.wire.openai}. */
    Set<String> ownPackages() {
        return ownPackages;
    }

    /** The nested class {@code name} of {@code binary}, or null. */
    String nested(String binary, String name) {
        String n = binary + "$" + name;
        return classes.containsKey(n) ? n : null;
    }

    /**
     * True when {@code binary} or one of its supertypes declares a field or method {@code name} (with {@code prefix},
     * one whose name starts with it: the docs shorten long test names with an ellipsis).
     */
    boolean hasMember(String binary, String name, boolean prefix) {
        Set<String> seen = new HashSet<>();
        List<String> todo = new ArrayList<>(List.of(binary));
        while (!todo.isEmpty()) {
            String c = todo.remove(todo.size() - 1);
            if (!seen.add(c)) {
                continue;
            }
            ClassInfo info = info(c);
            if (info == null) {
                continue;
            }
            for (String m : info.members()) {
                if (prefix ? m.startsWith(name) : m.equals(name)) {
                    return true;
                }
            }
            todo.addAll(info.supertypes());
        }
        return false;
    }

    private ClassInfo info(String binary) {
        if (read.containsKey(binary)) {
            return read.get(binary);
        }
        Source source = classes.get(binary);
        ClassInfo info = null;
        if (source != null) {
            try {
                info = parse(source.read());
            } catch (IOException e) {
                throw new UncheckedIOException("reading the class file of " + binary, e);
            }
        }
        read.put(binary, info);
        return info;
    }

    void close() throws IOException {
        for (JarFile jar : jars) {
            jar.close();
        }
    }

    // ------------------------------------------------------------------------------------------- the sources

    private void addDirectory(Path dir, Origin origin) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                String binary = binaryName(dir.relativize(f).toString().replace(File.separatorChar, '/'));
                if (add(binary, () -> Files.readAllBytes(f), origin) && origin == Origin.BUILD) {
                    int dot = binary.lastIndexOf('.');
                    if (dot > 0) {
                        ownPackages.add(binary.substring(0, dot));
                    }
                }
            }
        }
    }

    private void addJar(Path path) throws IOException {
        JarFile jar = new JarFile(path.toFile());
        jars.add(jar);
        jar.stream().filter(e -> !e.isDirectory() && !e.getName().startsWith("META-INF/")).forEach(e -> {
            String binary = binaryName(e.getName());
            add(binary, () -> readEntry(jar, e), Origin.CLASSPATH);
        });
    }

    /**
     * The first source of a class wins: the build's own classes, then the classpath's, then the JDK's. The build's
     * classes come from its modules' directories only: a jar of an earlier build in the local repository (what a
     * reactor without the modules resolves) would keep a renamed class alive.
     */
    private boolean add(String binary, Source source, Origin origin) {
        if (binary == null || origin != Origin.BUILD && binary.startsWith("dev.llmsidecar.")
                || classes.putIfAbsent(binary, source) != null) {
            return false;
        }
        origins.put(binary, origin);
        return true;
    }

    private static byte[] readEntry(JarFile jar, ZipEntry e) throws IOException {
        try (InputStream in = jar.getInputStream(e)) {
            return in.readAllBytes();
        }
    }

    private void addJdk() throws IOException {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        try (Stream<Path> modules = Files.list(jrt.getPath("/modules"))) {
            for (Path module : (Iterable<Path>) modules::iterator) {
                try (Stream<Path> files = Files.walk(module)) {
                    files.filter(p -> p.toString().endsWith(".class")).forEach(f -> {
                        String binary = binaryName(module.relativize(f).toString());
                        add(binary, () -> Files.readAllBytes(f), Origin.JDK);
                    });
                }
            }
        }
    }

    /** {@code a/b/C$D.class} as {@code a.b.C$D}; null for module-info, package-info and non-classes. */
    private static String binaryName(String path) {
        if (!path.endsWith(".class") || path.endsWith("module-info.class") || path.endsWith("package-info.class")) {
            return null;
        }
        return path.substring(0, path.length() - ".class".length()).replace('/', '.');
    }

    /** {@code a.b.C}: C; {@code a.b.C$D}: D (anonymous and local classes have none). */
    private static List<String> simpleNames(String binary) {
        String last = binary.substring(binary.lastIndexOf('.') + 1);
        int dollar = last.lastIndexOf('$');
        String simple = dollar < 0 ? last : last.substring(dollar + 1);
        if (simple.isEmpty() || !Character.isJavaIdentifierStart(simple.charAt(0))) {
            return List.of();
        }
        return List.of(simple);
    }

    // ------------------------------------------------------------------------------------ the class file format

    /** The supertypes and member names of a class file (JVMS chapter 4); nothing else of it is kept. */
    static ClassInfo parse(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] classNameIndex = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF(); // u2 length + modified UTF-8, as DataInput reads it
                case 7 -> classNameIndex[i] = in.readUnsignedShort();
                case 8, 16, 19, 20 -> in.skipNBytes(2);
                case 15 -> in.skipNBytes(3);
                case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipNBytes(4);
                case 5, 6 -> {
                    in.skipNBytes(8);
                    i++; // takes two entries
                }
                default -> throw new IOException("constant pool tag " + tag);
            }
        }
        in.readUnsignedShort(); // access flags
        String name = className(utf8, classNameIndex, in.readUnsignedShort());
        List<String> supertypes = new ArrayList<>();
        int superIndex = in.readUnsignedShort();
        if (superIndex != 0) {
            supertypes.add(className(utf8, classNameIndex, superIndex));
        }
        int interfaces = in.readUnsignedShort();
        for (int i = 0; i < interfaces; i++) {
            supertypes.add(className(utf8, classNameIndex, in.readUnsignedShort()));
        }
        Set<String> members = new HashSet<>();
        for (int kind = 0; kind < 2; kind++) { // fields, then methods
            int n = in.readUnsignedShort();
            for (int i = 0; i < n; i++) {
                in.readUnsignedShort(); // access flags
                members.add(utf8[in.readUnsignedShort()]);
                in.readUnsignedShort(); // descriptor
                int attributes = in.readUnsignedShort();
                for (int a = 0; a < attributes; a++) {
                    in.readUnsignedShort();
                    in.skipNBytes(Integer.toUnsignedLong(in.readInt()));
                }
            }
        }
        members.remove("<init>");
        members.remove("<clinit>");
        return new ClassInfo(name, supertypes, members);
    }

    private static String className(String[] utf8, int[] classNameIndex, int index) {
        return utf8[classNameIndex[index]].replace('/', '.');
    }
}
