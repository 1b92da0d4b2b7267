package dev.transferengine;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's layering, checked on its main classes: the API (its root and its exceptions) at the bottom; the SPI on
 * the API; core on both, reaching CUDA and Reactor only through the SPI (the UVM watcher provider and the engine thread
 * factory, found through {@link java.util.ServiceLoader}); one package per transport on the API and the SPI only;
 * native access and CUDA beside them; no cycle between packages except the API's two entry points into core; and a
 * module descriptor that exports the API, its exceptions and the SPI only. The Reactor facade is a module of its own.
 */
class ArchitectureTest {

    private static final String API = "dev.transferengine";
    private static final String EXCEPTIONS = "dev.transferengine.exceptions";
    private static final String CORE = "dev.transferengine.core..";
    private static final String SPI = "dev.transferengine.spi..";
    private static final String TRANSPORTS = "dev.transferengine.transport..";
    private static final String CUDA = "dev.transferengine.cuda..";
    private static final String NATIVE = "dev.transferengine.nativeaccess..";
    private static final String REACTOR = "reactor..";

    private static final JavaClasses ENGINE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(API);

    /** The API classes that reach into core: the builder makes the engine, the counters hand core their updater. */
    private static final DescribedPredicate<JavaClass> API_ENTRY_POINTS =
            belongToAnyOf(TransferEngineBuilder.class, TransferCounters.class);
    /** What those entry points may use of core. */
    private static final DescribedPredicate<JavaClass> CORE_ENTRY_POINTS = resideInAPackage(CORE)
            .and(nameMatching("dev\\.transferengine\\.core\\.(Engines|TransferCountersUpdater)(\\$.*)?"));

    @Test
    void theApiUsesNoOtherPackageOfTheEngine() {
        noClasses()
                .that()
                .resideInAnyPackage(API, EXCEPTIONS)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(SPI, TRANSPORTS, CUDA, NATIVE, REACTOR)
                .check(ENGINE);
    }

    @Test
    void theApiReachesCoreOnlyThroughTheBuilderAndTheCountersUpdater() {
        noClasses()
                .that()
                .resideInAnyPackage(API, EXCEPTIONS)
                .and(not(API_ENTRY_POINTS))
                .should()
                .dependOnClassesThat()
                .resideInAPackage(CORE)
                .check(ENGINE);
        noClasses()
                .that(API_ENTRY_POINTS)
                .should()
                .dependOnClassesThat(resideInAPackage(CORE).and(not(CORE_ENTRY_POINTS)))
                .check(ENGINE);
    }

    @Test
    void theSpiDependsOnTheApiOnly() {
        noClasses()
                .that()
                .resideInAPackage(SPI)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(CORE, TRANSPORTS, CUDA, NATIVE, REACTOR)
                .check(ENGINE);
    }

    @Test
    void coreKnowsNoTransport() {
        noClasses()
                .that()
                .resideInAPackage(CORE)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(TRANSPORTS)
                .check(ENGINE);
    }

    @Test
    void coreReachesCudaOnlyThroughTheSpi() {
        noClasses()
                .that()
                .resideInAPackage(CORE)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(CUDA)
                .check(ENGINE);
    }

    @Test
    void noPartOfTheEngineDependsOnReactor() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage(REACTOR).check(ENGINE);
    }

    @Test
    void transportsKnowNeitherCoreNorEachOther() {
        noClasses()
                .that()
                .resideInAPackage(TRANSPORTS)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(CORE, CUDA, REACTOR)
                .check(ENGINE);
        slices().matching("dev.transferengine.transport.(*)..")
                .should()
                .notDependOnEachOther()
                .check(ENGINE);
    }

    @Test
    void nativeAccessAndCudaStayBelowCoreAndTheTransports() {
        noClasses()
                .that()
                .resideInAPackage(NATIVE)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(CORE, SPI, TRANSPORTS, CUDA, REACTOR)
                .check(ENGINE);
        noClasses()
                .that()
                .resideInAPackage(CUDA)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(CORE, TRANSPORTS, REACTOR)
                .check(ENGINE);
    }

    @Test
    void onlyTheNativePackagesLinkNativeCode() {
        noClasses()
                .that()
                .resideOutsideOfPackages(NATIVE, CUDA, "dev.transferengine.transport.fabric..")
                .should()
                .dependOnClassesThat()
                .belongToAnyOf(Linker.class, SymbolLookup.class, FunctionDescriptor.class)
                .check(ENGINE);
    }

    @Test
    void noPackageCycles() {
        slices().assignedFrom(BY_PACKAGE)
                .should()
                .beFreeOfCycles()
                .ignoreDependency(API_ENTRY_POINTS, CORE_ENTRY_POINTS)
                .check(ENGINE);
    }

    @Test
    void theModuleExportsTheApiItsExceptionsAndTheSpiOnlyAndProvidesEveryServiceEntry()
            throws IOException, URISyntaxException {
        final Path classes = Path.of(TransferEngine.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        final ModuleDescriptor module;
        try (InputStream in = Files.newInputStream(classes.resolve("module-info.class"))) {
            module = ModuleDescriptor.read(in);
        }
        assertThat(module.name()).isEqualTo("dev.transferengine");
        assertThat(module.exports())
                .allMatch(e -> !e.isQualified())
                .extracting(ModuleDescriptor.Exports::source)
                .containsExactlyInAnyOrder(API, EXCEPTIONS, "dev.transferengine.spi");
        assertThat(module.requires())
                .extracting(ModuleDescriptor.Requires::name)
                .doesNotContain("reactor.core");
        assertThat(module.opens()).isEmpty();
        // what the class path finds through META-INF/services, the module path must find through "provides"
        for (final ModuleDescriptor.Provides provides : module.provides()) {
            final List<String> entries =
                    Files.readAllLines(classes.resolve("META-INF/services/" + provides.service())).stream()
                            .map(String::strip)
                            .filter(line -> !line.isEmpty() && !line.startsWith("#"))
                            .toList();
            assertThat(provides.providers()).as(provides.service()).containsExactlyElementsOf(entries);
        }
        final Set<String> services;
        try (var files = Files.list(classes.resolve("META-INF/services"))) {
            services = files.map(file -> file.getFileName().toString()).collect(Collectors.toSet());
        }
        assertThat(module.provides())
                .extracting(ModuleDescriptor.Provides::service)
                .containsExactlyInAnyOrderElementsOf(services);
        assertThat(module.uses()).containsAll(services);
    }

    /**
     * One slice per engine package (the API's root package included, which "dev.transferengine.(**)" misses); the
     * exceptions are part of the API's slice: they name API types in what they carry and the API throws them.
     */
    private static final SliceAssignment BY_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(final JavaClass javaClass) {
            final String name = javaClass.getPackageName().equals(EXCEPTIONS) ? API : javaClass.getPackageName();
            return name.equals(API) || name.startsWith(API + ".") ? SliceIdentifier.of(name) : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "the engine's packages";
        }
    };
}
