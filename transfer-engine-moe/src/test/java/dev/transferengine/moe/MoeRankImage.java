package dev.transferengine.moe;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The image the container tests run {@link MoeRankServer} in, built once per test JVM FROM the base image named by
 * {@code SAMPLE_BASE_IMAGE} (CI builds {@code localhost/jre25-bb:1} locally, so nothing is pulled; a public Java 25
 * runtime otherwise), with this test JVM's class path copied in: the module's classes and test classes, the engine's,
 * and their dependencies; and, where {@code TE_FABRIC_LIBRARY} names one, that libfabric (the CI's 2.1 build needs
 * only libc) as {@value #FABRIC_LIBRARY}.
 */
final class MoeRankImage {

    private static final String DEFAULT_BASE = "eclipse-temurin:25-jre";

    /** Where the image holds the libfabric the fabric ranks load. */
    static final String FABRIC_LIBRARY = "/app/fabric/libfabric.so.1";

    private static @Nullable Built built;

    /** The image, the class path inside it, and whether it holds a libfabric. */
    private record Built(ImageFromDockerfile image, String classPath, boolean fabric) {}

    private MoeRankImage() {}

    /** The image, built on first use. */
    static ImageFromDockerfile get() {
        return built().image();
    }

    /** Whether the image holds a libfabric at {@link #FABRIC_LIBRARY}, so fabric ranks can run in it. */
    static boolean hasFabric() {
        return built().fabric();
    }

    /** The class path inside the image. */
    static String classPath() {
        return built().classPath();
    }

    private static synchronized Built built() {
        Built known = built;
        if (known == null) {
            final String base = System.getenv().getOrDefault("SAMPLE_BASE_IMAGE", DEFAULT_BASE);
            final ImageFromDockerfile image = new ImageFromDockerfile("localhost/transfer-engine-moe-it", true);
            final List<String> entries = new ArrayList<>();
            int n = 0;
            for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator, -1)) {
                final Path path = Path.of(entry);
                if (Files.isDirectory(path)) {
                    image.withFileFromPath("classes/" + n, path);
                    entries.add("/app/classes/" + n);
                    n++;
                } else if (Files.isRegularFile(path) && entry.endsWith(".jar")) {
                    // numbered: two artifacts may share a file name
                    image.withFileFromPath("lib/" + n + "-" + path.getFileName(), path);
                    n++;
                }
            }
            entries.add("/app/lib/*");
            final String library = System.getenv("TE_FABRIC_LIBRARY");
            final boolean fabric = library != null && Files.isRegularFile(Path.of(library));
            if (fabric) {
                image.withFileFromPath("fabric/libfabric.so.1", Path.of(library));
            }
            known = new Built(
                    image.withDockerfileFromBuilder(dockerfile -> {
                        dockerfile
                                .from(base)
                                .workDir("/app")
                                .copy("classes", "/app/classes")
                                .copy("lib", "/app/lib");
                        if (fabric) {
                            dockerfile.copy("fabric", "/app/fabric");
                        }
                        dockerfile.build();
                    }),
                    String.join(":", entries),
                    fabric);
            built = known;
        }
        return known;
    }
}
