package org.ephemera.suite;

import java.io.InputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.python.core.PyCode;
import org.python.core.PyObject;
import org.python.core.PyStringMap;
import org.python.util.PythonInterpreter;

/**
 * jython: runs a Python program (resource jython_bench.py: n-body, a task
 * scheduler, word counting, binary trees) with Jython's PythonInterpreter.
 * Jython's start-up and the program's compilation are setup; each iteration
 * executes the compiled program in a fresh namespace.
 */
final class Jython implements Workload {
    // The program's RESULT for SCALE 1 and 8, the same as CPython 3 prints.
    private static final String SMALL = String.join("\n",
            "nbody 2000 -0.169075164 -0.169071607",
            "scheduler 1500 937863400",
            "text 1090 3568 334 2433816 ka=135,tas=117,ren=114,gor=109,par=109",
            "trees 12 40619 8191");
    private static final String DEFAULT = String.join("\n",
            "nbody 16000 -0.169075164 -0.169022118",
            "scheduler 12000 729108623",
            "text 1883 23553 2667 255472732 mi=946,gor=941,dem=939,ka=925,par=910",
            "trees 12 324952 8191");

    private int scale;
    private String expected;
    private PythonInterpreter interpreter;
    private PyCode program;
    private String result;

    @Override
    public void setup(boolean small) throws Exception {
        scale = small ? 1 : 8;
        expected = small ? SMALL : DEFAULT;
        Properties options = new Properties();
        options.setProperty("python.import.site", "false"); // the program imports nothing
        options.setProperty("python.cachedir.skip", "true"); // no package cache written under $HOME
        options.setProperty("python.console.encoding", "UTF-8");
        PythonInterpreter.initialize(System.getProperties(), options, new String[0]);
        interpreter = new PythonInterpreter();
        interpreter.setOut(new StringWriter());
        interpreter.setErr(new StringWriter());
        String source;
        try (InputStream in = Jython.class.getResourceAsStream("jython_bench.py")) {
            source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        program = interpreter.compile(source, "jython_bench.py");
    }

    @Override
    public void iterate(Events events) {
        interpreter.setLocals(new PyStringMap());
        interpreter.set("SCALE", scale);
        interpreter.exec(program);
        PyObject r = interpreter.get("RESULT");
        result = r == null ? null : r.toString();
    }

    @Override
    public String check() {
        if (!expected.equals(result)) {
            return "the program's result is " + (result == null ? "missing" : "'" + result.replace('\n', '|') + "'")
                    + ", expected '" + expected.replace('\n', '|') + "'";
        }
        return null;
    }

    @Override
    public void teardown() {
        interpreter.close();
    }
}
