package dev.transferengine.sample;

import java.nio.file.Files;
import java.nio.file.Path;

import org.jspecify.annotations.Nullable;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The sample app's image, built once per test JVM from the packaged jar, FROM the base image named by the
 * {@code sample.baseImage} system property (a public Java 25 runtime by default; CI passes one it built locally, so
 * nothing is pulled).
 */
final class SampleImage {

    private static final String DEFAULT_BASE = "eclipse-temurin:25-jre";

    private static @Nullable ImageFromDockerfile image;

    private SampleImage() {}

    /** The image, built on first use. */
    static synchronized ImageFromDockerfile get() {
        if (image == null) {
            final Path jar = Path.of(System.getProperty("sample.jar", "target/sample-app.jar"));
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException("no app jar at " + jar.toAbsolutePath()
                        + ": run the container tests through 'mvn verify', which packages it first");
            }
            final String base = System.getProperty("sample.baseImage", DEFAULT_BASE);
            image = new ImageFromDockerfile("localhost/transfer-engine-sample-it", true)
                    .withFileFromPath("app.jar", jar)
                    .withDockerfileFromBuilder(dockerfile -> dockerfile
                            .from(base)
                            .workDir("/app")
                            .copy("app.jar", "/app/app.jar")
                            .expose(8080, 7400)
                            .entryPoint("java", "-jar", "/app/app.jar")
                            .build());
        }
        return image;
    }
}
