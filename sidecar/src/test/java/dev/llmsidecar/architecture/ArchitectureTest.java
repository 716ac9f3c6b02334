package dev.llmsidecar.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules docs/architecture.md states, as tests: a change that breaks one fails the build. Each rule
 * names the paragraph of the document it keeps true. The rules read the compiled classes of the sidecar module only
 * (not its tests).
 */
class ArchitectureTest {

    static final String ROOT = "dev.llmsidecar";

    /** The metrics side: everything that turns traffic into series, and what records or serves them. */
    static final String[] METRICS_SIDE = {ROOT + ".metrics..", ROOT + ".measure..", ROOT + ".live..",
            ROOT + ".otel..", ROOT + ".engine..", ROOT + ".gpu..", ROOT + ".scrape..", ROOT + ".trace..",
            ROOT + ".conversation..", ROOT + ".app.."};

    /** Plain Java: the timeline, SLO, window and saturation logic, unit-tested without sockets or a container. */
    static final String[] PLAIN = {ROOT + ".timeline..", ROOT + ".slo..", ROOT + ".window..",
            ROOT + ".saturation.."};

    static final String[] FRAMEWORKS = {"io.netty..", "io.vertx..", "io.quarkus..", "jakarta.enterprise..",
            "jakarta.inject..", "org.eclipse.microprofile.."};

    static final String SERVER = ROOT + ".proxy.ProxyServer";

    static JavaClasses sidecar;

    @BeforeAll
    static void importSidecar() {
        sidecar = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(ROOT);
    }

    /** "The transport reaches the metrics side by no path": not directly, not through another package. */
    @Test
    void theTransportReachesTheMetricsSideByNoPath() {
        check(noClasses().that().resideInAPackage(ROOT + ".proxy..")
                .should().transitivelyDependOnClassesThat().resideInAnyPackage(METRICS_SIDE)
                .because("the proxy reports only through observe/ (docs/architecture.md, The observer seam)"));
    }

    /** The seam speaks its own types and the plain ones below it; it knows neither side's machinery. */
    @Test
    void theSeamKnowsNeitherTheTransportNorTheMetricsSide() {
        check(noClasses().that().resideInAPackage(ROOT + ".observe..")
                .should().dependOnClassesThat().resideInAnyPackage(concat(METRICS_SIDE, ROOT + ".proxy..",
                        "io.netty..", "io.vertx..", "io.quarkus..")));
    }

    /** "timeline/, slo/, window/ and saturation/ are plain Java": no Netty, Vert.x, Quarkus or CDI type. */
    @Test
    void timingAndSloLogicIsPlainJava() {
        check(noClasses().that().resideInAnyPackage(PLAIN)
                .should().dependOnClassesThat().resideInAnyPackage(FRAMEWORKS));
    }

    /** The wire formats depend on neither the transport nor the metrics side, by any path. */
    @Test
    void wireFormatsDependOnNeitherTheTransportNorTheMetricsSide() {
        check(noClasses().that().resideInAPackage(ROOT + ".wire..")
                .should().transitivelyDependOnClassesThat().resideInAnyPackage(concat(METRICS_SIDE,
                        ROOT + ".proxy..", ROOT + ".observe..", ROOT + ".rewrite..", ROOT + ".includeusage..")));
    }

    /** The metrics API (the contract and its backends) is below what records into it. */
    @Test
    void theMetricsApiIsBelowWhatRecordsIntoIt() {
        check(noClasses().that().resideInAPackage(ROOT + ".metrics..")
                .should().dependOnClassesThat().resideInAnyPackage(ROOT + ".measure..", ROOT + ".live..",
                        ROOT + ".app..", ROOT + ".engine..", ROOT + ".gpu..", ROOT + ".scrape..", ROOT + ".proxy..",
                        ROOT + ".trace..", ROOT + ".conversation.."));
    }

    /**
     * include_usage lives in one package: nothing outside it names its types but the composition root, which
     * registers it behind the rewrite hook.
     */
    @Test
    void includeUsageIsNamedOnlyWhereItIsRegistered() {
        check(noClasses().that().resideOutsideOfPackages(ROOT + ".includeusage..", ROOT + ".app..")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".includeusage.."));
    }

    /**
     * The trace recorder lives in one package, in plain Java (files, Jackson, javax.crypto): no Netty, Vert.x, Quarkus
     * or CDI type; it hears of exchanges behind the seam (measure's ExchangeFollower), and nothing outside it names
     * its types but the composition root, which starts it and serves its files.
     */
    @Test
    void theTraceRecorderIsPlainJavaNamedOnlyWhereItIsWired() {
        check(noClasses().that().resideInAPackage(ROOT + ".trace..")
                .should().dependOnClassesThat().resideInAnyPackage(concat(FRAMEWORKS, ROOT + ".proxy..")));
        check(noClasses().that().resideOutsideOfPackages(ROOT + ".trace..", ROOT + ".app..")
                .should().dependOnClassesThat().resideInAPackage(ROOT + ".trace.."));
    }

    /** The rewrite hook is the transport's: it names no feature and nothing of the metrics side. */
    @Test
    void theRewriteHookNamesNoFeature() {
        check(noClasses().that().resideInAPackage(ROOT + ".rewrite..")
                .should().dependOnClassesThat().resideInAnyPackage(concat(METRICS_SIDE, ROOT + ".proxy..",
                        ROOT + ".includeusage..", ROOT + ".wire.openai..")));
    }

    /** Quarkus wiring and routes live in app/, apart from the logic they wire (config/ is the one mapping). */
    @Test
    void onlyTheWiringKnowsQuarkus() {
        check(noClasses().that().resideOutsideOfPackages(ROOT + ".app..")
                .should().dependOnClassesThat().resideInAnyPackage("io.quarkus..", "jakarta.enterprise..",
                        "jakarta.inject..", "org.eclipse.microprofile.."));
    }

    /** No cycle between the top-level packages (a sub-package belongs to its parent). */
    @Test
    void noCycleBetweenPackages() {
        check(slices().matching(ROOT + ".(*)..").should().beFreeOfCycles());
    }

    /** No cycle between the classes of the transport (a nested class counts as its outer class). */
    @Test
    void noCycleBetweenTheClassesOfTheTransport() {
        check(slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                if (!c.getPackageName().equals(ROOT + ".proxy")) {
                    return SliceIdentifier.ignore();
                }
                String name = c.getName();
                int nested = name.indexOf('$');
                return SliceIdentifier.of(nested < 0 ? name : name.substring(0, nested));
            }

            @Override
            public String getDescription() {
                return "the classes of " + ROOT + ".proxy";
            }
        }).should().beFreeOfCycles());
    }

    /** Nothing in the transport reaches into the server: an exchange is given what it needs when it is made. */
    @Test
    void exchangesAreGivenWhatTheyNeed() {
        DescribedPredicate<JavaClass> theServer = new DescribedPredicate<>("the proxy server or a class inside it") {
            @Override
            public boolean test(JavaClass c) {
                String name = c.getName();
                return name.equals(SERVER) || name.startsWith(SERVER + "$");
            }
        };
        check(noClasses().that().resideInAPackage(ROOT + ".proxy").and(DescribedPredicate.not(theServer))
                .should().accessClassesThat(theServer).orShould().dependOnClassesThat(theServer));
    }

    private static void check(ArchRule rule) {
        rule.check(sidecar);
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
