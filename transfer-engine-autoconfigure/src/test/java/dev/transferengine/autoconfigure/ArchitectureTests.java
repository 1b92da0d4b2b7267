package dev.transferengine.autoconfigure;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The starter uses the engine through its API and the reactive facade, never its internals. One known exception,
 * the properties mapper's CUDA check through {@code spi.DeviceMemory} (exported, but the SPI is for transport and
 * device-memory authors), is named here so that no other one creeps in. The native-access check asks the JDK
 * about the engine's module and needs no engine internals.
 */
class ArchitectureTests {

    private static final String KNOWN_EXCEPTIONS = "dev\\.transferengine\\.spi\\.DeviceMemory(\\$.*)?";

    @Test
    void autoConfigurationUsesTheEngineThroughItsApiOnly() {
        noClasses()
                .that()
                .resideInAPackage("dev.transferengine.autoconfigure..")
                .should()
                .dependOnClassesThat(resideInAnyPackage(
                                "dev.transferengine.core..",
                                "dev.transferengine.spi..",
                                "dev.transferengine.transport..",
                                "dev.transferengine.cuda..",
                                "dev.transferengine.nativeaccess..")
                        .and(not(nameMatching(KNOWN_EXCEPTIONS))))
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("dev.transferengine.autoconfigure"));
    }
}
