package dev.transferengine.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * A WebFlux service on the transfer-engine starter. Its role ({@code sample.role}) decides what it does:
 * {@code prefill} and {@code decode} move KV-cache pages layer by layer, {@code trainer} pushes weights to
 * {@code inference} nodes, and {@code demo} (the default) runs a prefill and a decode in one process.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleApplication {

    /**
     * Starts the service.
     *
     * @param args command-line arguments, e.g. {@code --sample.role=decode}
     */
    public static void main(final String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }
}
