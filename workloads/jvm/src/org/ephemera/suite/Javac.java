package org.ephemera.suite;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;

/**
 * javac: compiles a generated code base (JavacSource) with the JDK's own
 * compiler (javax.tools), from sources in memory to class files in memory,
 * with a new file manager and compilation task every iteration.
 */
final class Javac implements Workload {
    private static final List<String> OPTIONS = List.of("-proc:none", "-g", "-encoding", "UTF-8");

    private JavaCompiler compiler;
    private JavacSource source;
    private List<JavaFileObject> units;
    private boolean ok;
    private List<Diagnostic<? extends JavaFileObject>> diagnostics;
    private Map<String, byte[]> classes;
    private String javacLog;

    @Override
    public void setup(boolean small) {
        compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            throw new IllegalStateException("no system Java compiler (a JRE, not a JDK?)");
        }
        source = small ? new JavacSource(1, 12, 0x1AC) : new JavacSource(4, 12, 0x1AC);
        units = new ArrayList<>();
        for (JavacSource.Unit u : source.units) {
            units.add(new SimpleJavaFileObject(URI.create("mem:///" + u.path), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return u.text;
                }
            });
        }
    }

    @Override
    public void iterate(Events events) throws Exception {
        DiagnosticCollector<JavaFileObject> collector = new DiagnosticCollector<>();
        StringWriter log = new StringWriter();
        classes = new ConcurrentHashMap<>();
        try (StandardJavaFileManager standard = compiler.getStandardFileManager(collector, Locale.ROOT,
                StandardCharsets.UTF_8);
             JavaFileManager files = new MemoryOutput(standard, classes)) {
            // The code base needs only the JDK: not the suite's class path, which javac would scan.
            standard.setLocation(StandardLocation.CLASS_PATH, List.of());
            ok = compiler.getTask(log, files, collector, OPTIONS, null, units).call();
        }
        diagnostics = collector.getDiagnostics();
        javacLog = log.toString();
        // javac catches an OutOfMemoryError, prints it to its log as a
        // compiler bug and fails: make it what it is.
        if (javacLog.contains("java.lang.OutOfMemoryError")) {
            throw new OutOfMemoryError("javac reported an OutOfMemoryError as a compiler failure");
        }
    }

    @Override
    public String check() {
        if (!javacLog.isEmpty()) {
            return "javac printed: " + javacLog.strip().replace('\n', ' ');
        }
        if (!ok || !diagnostics.isEmpty()) {
            return "the compilation " + (ok ? "succeeded" : "failed") + " with " + diagnostics.size()
                    + " diagnostics" + (diagnostics.isEmpty() ? "" : ", the first: "
                    + diagnostics.get(0).toString().replace('\n', ' '));
        }
        if (classes.size() != source.classFiles) {
            return "the compilation wrote " + classes.size() + " class files, expected " + source.classFiles;
        }
        for (Map.Entry<String, byte[]> e : classes.entrySet()) {
            byte[] b = e.getValue();
            if (b.length < 4 || (b[0] & 0xff) != 0xca || (b[1] & 0xff) != 0xfe || (b[2] & 0xff) != 0xba
                    || (b[3] & 0xff) != 0xbe) {
                return e.getKey() + " is not a class file";
            }
        }
        classes = null;
        return null;
    }

    /** A file manager that keeps the class files it is given in a map, by class name. */
    private static final class MemoryOutput extends ForwardingJavaFileManager<StandardJavaFileManager> {
        private final Map<String, byte[]> classes;

        MemoryOutput(StandardJavaFileManager standard, Map<String, byte[]> classes) {
            super(standard);
            this.classes = classes;
        }

        @Override
        public JavaFileObject getJavaFileForOutput(Location location, String className, JavaFileObject.Kind kind,
                FileObject sibling) {
            return new SimpleJavaFileObject(URI.create("mem:///" + className.replace('.', '/') + kind.extension),
                    kind) {
                @Override
                public OutputStream openOutputStream() {
                    return new ByteArrayOutputStream() {
                        @Override
                        public void close() {
                            classes.put(className, toByteArray());
                        }
                    };
                }
            };
        }
    }
}
