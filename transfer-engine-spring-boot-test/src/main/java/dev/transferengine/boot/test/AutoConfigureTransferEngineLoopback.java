package dev.transferengine.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.test.context.TestPropertySource;

/**
 * Put on a Spring Boot test class (next to {@code @SpringBootTest}) to run the application's transfer engine on
 * loopback and give the test a {@link LoopbackPeer} to exchange data with it: it sets
 * {@value LoopbackTransferEngineAutoConfiguration#PROPERTY}{@code =true}, which
 * {@link LoopbackTransferEngineAutoConfiguration} acts on.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@TestPropertySource(properties = LoopbackTransferEngineAutoConfiguration.PROPERTY + "=true")
public @interface AutoConfigureTransferEngineLoopback {}
