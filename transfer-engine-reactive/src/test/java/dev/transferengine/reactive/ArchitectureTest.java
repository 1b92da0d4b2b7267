package dev.transferengine.reactive;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The facade uses the engine's API only; its thread factory, the engine's SPI only. */
class ArchitectureTest {

    private static final JavaClasses REACTIVE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.transferengine.reactive");

    private static final String[] ENGINE_INTERNALS = {
        "dev.transferengine.core..",
        "dev.transferengine.transport..",
        "dev.transferengine.cuda..",
        "dev.transferengine.nativeaccess.."
    };

    @Test
    void theFacadeUsesTheApiOnly() {
        noClasses()
                .that()
                .resideInAPackage("dev.transferengine.reactive")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(ENGINE_INTERNALS)
                .orShould()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.transferengine.spi..", "dev.transferengine.reactive.internal..")
                .check(REACTIVE);
    }

    @Test
    void theThreadFactoryUsesTheSpiOnly() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(ENGINE_INTERNALS)
                .check(REACTIVE);
    }
}
