package dev.transferengine.autoconfigure;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The starter uses the engine through its API and the reactive facade only, never its internals or the SPI. */
class ArchitectureTests {

    @Test
    void autoConfigurationUsesTheEngineThroughItsApiOnly() {
        noClasses().that().resideInAPackage("dev.transferengine.autoconfigure..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.transferengine.core..", "dev.transferengine.spi..",
                "dev.transferengine.transport..", "dev.transferengine.cuda..", "dev.transferengine.nativeaccess..")
            .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.transferengine.autoconfigure"));
    }
}
