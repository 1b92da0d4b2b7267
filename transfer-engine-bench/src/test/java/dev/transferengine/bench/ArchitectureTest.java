package dev.transferengine.bench;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The bench uses the engine as its users do: the API and, for the domain-level and device-memory benchmarks, the
 * exported SPI and the test kit's {@code instant} transport and {@code Domains}; never core, a transport, CUDA or
 * native access (the module exports none of them).
 */
class ArchitectureTest {

    @Test
    void theBenchUsesTheApiAndTheExportedSpiOnly() {
        noClasses()
                .that()
                .resideInAPackage("dev.transferengine.bench..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.transferengine.core..",
                        "dev.transferengine.transport..",
                        "dev.transferengine.cuda..",
                        "dev.transferengine.nativeaccess..")
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("dev.transferengine.bench"));
    }
}
