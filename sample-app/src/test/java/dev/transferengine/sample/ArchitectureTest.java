package dev.transferengine.sample;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The sample app is written as a user would: the engine's API, the reactive facade and the starter only. */
class ArchitectureTest {

    @Test
    void theSampleUsesTheEngineThroughItsApiOnly() {
        noClasses()
                .that()
                .resideInAPackage("dev.transferengine.sample..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "dev.transferengine.core..",
                        "dev.transferengine.spi..",
                        "dev.transferengine.transport..",
                        "dev.transferengine.cuda..",
                        "dev.transferengine.nativeaccess..")
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("dev.transferengine.sample"));
    }
}
