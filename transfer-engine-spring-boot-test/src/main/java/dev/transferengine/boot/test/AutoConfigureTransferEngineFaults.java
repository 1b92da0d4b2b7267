package dev.transferengine.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.test.context.TestPropertySource;

/**
 * Put on a Spring Boot test class (next to {@code @SpringBootTest}) for the loopback engine pair of
 * {@link AutoConfigureTransferEngineLoopback} with fault injection: both engines run the conformance kit's holding
 * transport over tcp and a manual clock, and a {@link TransferEngineFaults} bean holds their traffic, partitions
 * them, kills the peer and expires deadlines. It sets {@value LoopbackTransferEngineAutoConfiguration#PROPERTY} and
 * {@value LoopbackTransferEngineAutoConfiguration#FAULTS_PROPERTY} to {@code true}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@TestPropertySource(
        properties = {
            LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true",
            LoopbackTransferEngineAutoConfiguration.FAULTS_PROPERTY + "=true"
        })
public @interface AutoConfigureTransferEngineFaults {}
