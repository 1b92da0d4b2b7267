import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.ExportsTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.ModifiersTree;
import com.sun.source.tree.ModuleTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import javax.lang.model.element.Modifier;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Lists the public surface of the transfer-engine modules from their sources: the packages each module-info.java
 * exports, the public types in them (nested ones included) and each type's public methods (record components count
 * as their accessors; constructors and fields are left out). It parses only, so it runs on any commit without a
 * build. Usage (from the repository root):
 *
 * <pre>java docs/tools/PublicApi.java MODULE_DIR... &gt; listing.md</pre>
 *
 * where each MODULE_DIR has src/main/java/module-info.java. Prints Markdown: a count line, then one section per
 * exported package.
 */
public final class PublicApi {

    record Type(String name, String kind, List<String> methods) {}

    public static void main(final String[] args) throws IOException {
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final TreeMap<String, List<Type>> packages = new TreeMap<>();
        for (final String module : args) {
            final Path root = Path.of(module, "src/main/java");
            try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null)) {
                final List<String> exported = exports(javac, files, root.resolve("module-info.java"));
                for (final String pkg : exported) {
                    final Path dir = root.resolve(pkg.replace('.', '/'));
                    final List<Path> sources;
                    try (Stream<Path> list = Files.list(dir)) {
                        sources = list.filter(p -> p.toString().endsWith(".java"))
                                .filter(p -> !p.getFileName().toString().equals("package-info.java"))
                                .sorted()
                                .toList();
                    }
                    final List<Type> types = packages.computeIfAbsent(pkg, k -> new ArrayList<>());
                    for (final CompilationUnitTree unit : parse(javac, files, sources)) {
                        for (final Tree decl : unit.getTypeDecls()) {
                            if (decl instanceof ClassTree type && isPublic(type.getModifiers(), false)) {
                                collect(type, "", false, types);
                            }
                        }
                    }
                }
            }
        }
        final int typeCount = packages.values().stream().mapToInt(List::size).sum();
        final int methodCount = packages.values().stream()
                .flatMap(List::stream)
                .mapToInt(t -> t.methods().size())
                .sum();
        System.out.println("Exported packages: " + packages.size() + ", public types: " + typeCount
                + ", public methods: " + methodCount);
        for (final var entry : packages.entrySet()) {
            System.out.println();
            System.out.println("### `" + entry.getKey() + "` (" + entry.getValue().size() + " types)");
            System.out.println();
            for (final Type type : entry.getValue()) {
                System.out.println("- " + type.kind() + " `" + type.name() + "`"
                        + (type.methods().isEmpty()
                                ? ""
                                : ": " + type.methods().stream().map(m -> "`" + m + "`").collect(Collectors.joining(", "))));
            }
        }
    }

    private static List<String> exports(
            final JavaCompiler javac, final StandardJavaFileManager files, final Path moduleInfo) throws IOException {
        final List<String> exported = new ArrayList<>();
        for (final CompilationUnitTree unit : parse(javac, files, List.of(moduleInfo))) {
            final ModuleTree module = unit.getModule();
            for (final var directive : module.getDirectives()) {
                if (directive instanceof ExportsTree exports && exports.getModuleNames() == null) {
                    exported.add(exports.getPackageName().toString());
                }
            }
        }
        return exported;
    }

    private static Iterable<? extends CompilationUnitTree> parse(
            final JavaCompiler javac, final StandardJavaFileManager files, final List<Path> sources) throws IOException {
        final Iterable<? extends JavaFileObject> objects = files.getJavaFileObjectsFromPaths(sources);
        final JavacTask task = (JavacTask) javac.getTask(null, files, d -> {}, List.of("-proc:none"), null, objects);
        return task.parse();
    }

    private static void collect(final ClassTree type, final String outer, final boolean inInterface, final List<Type> out) {
        final String name = outer + type.getSimpleName();
        final boolean isInterface = type.getKind() == Tree.Kind.INTERFACE || type.getKind() == Tree.Kind.ANNOTATION_TYPE;
        final List<String> methods = new ArrayList<>();
        if (type.getKind() == Tree.Kind.RECORD) {
            for (final Tree member : type.getMembers()) {
                if (member instanceof VariableTree field
                        && !field.getModifiers().getFlags().contains(Modifier.STATIC)) { // a record's only instance fields
                    methods.add(field.getName() + "()");
                }
            }
        }
        final List<ClassTree> nested = new ArrayList<>();
        for (final Tree member : type.getMembers()) {
            if (member instanceof MethodTree method
                    && !method.getName().contentEquals("<init>")
                    && isPublic(method.getModifiers(), isInterface)) {
                final String params = method.getParameters().stream()
                        .map(p -> p.getType().toString())
                        .collect(Collectors.joining(", "));
                final String signature = method.getName() + "(" + params + ")";
                methods.remove(method.getName() + "()"); // an explicit record accessor
                methods.add(signature);
            } else if (member instanceof ClassTree inner && isPublic(inner.getModifiers(), isInterface)) {
                nested.add(inner);
            }
        }
        out.add(new Type(name, kind(type), methods));
        for (final ClassTree inner : nested) {
            collect(inner, name + ".", isInterface, out);
        }
    }

    private static String kind(final ClassTree type) {
        return switch (type.getKind()) {
            case INTERFACE -> "interface";
            case ANNOTATION_TYPE -> "annotation";
            case ENUM -> "enum";
            case RECORD -> "record";
            default -> type.getModifiers().getFlags().contains(Modifier.ABSTRACT) ? "abstract class" : "class";
        };
    }

    /** Members of an interface are public unless private; elsewhere only what says public. */
    private static boolean isPublic(final ModifiersTree modifiers, final boolean inInterface) {
        final Set<Modifier> flags = modifiers.getFlags();
        return flags.contains(Modifier.PUBLIC) || (inInterface && !flags.contains(Modifier.PRIVATE));
    }
}
