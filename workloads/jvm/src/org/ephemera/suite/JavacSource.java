package org.ephemera.suite;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The javac workload's code base: packages gen.p0 .. of classes that
 * extend one another in chains, with fields, generic methods, a static
 * nested class, an inner class, an anonymous class, lambdas and streams,
 * calls into other packages; per package an interface with default
 * methods, an enum and a generic class.  All compiles with no warnings.
 */
final class JavacSource {
    /** One compilation unit: the path of its file and its text. */
    static final class Unit {
        final String path;
        final String text;

        Unit(String path, String text) {
            this.path = path;
            this.text = text;
        }
    }

    final List<Unit> units = new ArrayList<>();
    /** The number of class files the code base compiles to. */
    int classFiles;
    long lines;

    JavacSource(int packages, int classesPerPackage, long seed) {
        Random r = new Random(seed);
        for (int p = 0; p < packages; p++) {
            add("gen/p" + p + "/Shape" + p + ".java", shape(p));
            add("gen/p" + p + "/Color" + p + ".java", color(p));
            add("gen/p" + p + "/Box" + p + ".java", box(p));
            classFiles += 4; // Shape, Color, Box, Box.Builder
            for (int c = 0; c < classesPerPackage; c++) {
                add("gen/p" + p + "/Node" + p + "_" + c + ".java", node(p, c, packages, classesPerPackage, r));
                classFiles += 4; // the class, Key, Cursor, the anonymous Runnable
            }
        }
    }

    private void add(String path, String text) {
        units.add(new Unit(path, text));
        lines += text.chars().filter(ch -> ch == '\n').count();
    }

    private static String shape(int p) {
        return "package gen.p" + p + ";\n\n"
                + "public interface Shape" + p + " {\n"
                + "    int id();\n\n"
                + "    default double area() {\n"
                + "        return id() * 1.5 + " + p + ";\n"
                + "    }\n\n"
                + "    default String label() {\n"
                + "        return getClass().getSimpleName() + \"#\" + id() + \" area \" + area();\n"
                + "    }\n\n"
                + "    static <S extends Shape" + p + "> S largest(java.util.List<S> shapes) {\n"
                + "        S best = null;\n"
                + "        for (S s : shapes) {\n"
                + "            if (best == null || s.area() > best.area()) {\n"
                + "                best = s;\n"
                + "            }\n"
                + "        }\n"
                + "        return best;\n"
                + "    }\n"
                + "}\n";
    }

    private static String color(int p) {
        return "package gen.p" + p + ";\n\n"
                + "public enum Color" + p + " {\n"
                + "    RED(1), GREEN(2), BLUE(3), CYAN(4), MAGENTA(5);\n\n"
                + "    private final int weight;\n\n"
                + "    Color" + p + "(int weight) {\n"
                + "        this.weight = weight;\n"
                + "    }\n\n"
                + "    public int weight() {\n"
                + "        return weight * " + (p + 1) + ";\n"
                + "    }\n\n"
                + "    public Color" + p + " next() {\n"
                + "        return values()[(ordinal() + 1) % values().length];\n"
                + "    }\n"
                + "}\n";
    }

    private static String box(int p) {
        return "package gen.p" + p + ";\n\n"
                + "import java.util.ArrayList;\n"
                + "import java.util.List;\n"
                + "import java.util.function.Function;\n\n"
                + "public final class Box" + p + "<T extends Comparable<T>> {\n"
                + "    private final List<T> items = new ArrayList<>();\n\n"
                + "    public Box" + p + "<T> add(T item) {\n"
                + "        items.add(item);\n"
                + "        return this;\n"
                + "    }\n\n"
                + "    public T max() {\n"
                + "        T best = null;\n"
                + "        for (T t : items) {\n"
                + "            if (best == null || t.compareTo(best) > 0) {\n"
                + "                best = t;\n"
                + "            }\n"
                + "        }\n"
                + "        return best;\n"
                + "    }\n\n"
                + "    public <R extends Comparable<R>> Box" + p + "<R> map(Function<? super T, ? extends R> f) {\n"
                + "        Box" + p + "<R> out = new Box" + p + "<>();\n"
                + "        for (T t : items) {\n"
                + "            out.add(f.apply(t));\n"
                + "        }\n"
                + "        return out;\n"
                + "    }\n\n"
                + "    public int size() {\n"
                + "        return items.size();\n"
                + "    }\n\n"
                + "    public static final class Builder<E extends Comparable<E>> {\n"
                + "        private final Box" + p + "<E> box = new Box" + p + "<>();\n\n"
                + "        @SafeVarargs\n"
                + "        public final Builder<E> with(E... es) {\n"
                + "            for (E e : es) {\n"
                + "                box.add(e);\n"
                + "            }\n"
                + "            return this;\n"
                + "        }\n\n"
                + "        public Box" + p + "<E> build() {\n"
                + "            return box;\n"
                + "        }\n"
                + "    }\n"
                + "}\n";
    }

    private static String node(int p, int c, int packages, int perPackage, Random r) {
        String name = "Node" + p + "_" + c;
        boolean root = c % 5 == 0;
        int q = r.nextInt(packages);
        String other = "gen.p" + q + ".Node" + q + "_" + r.nextInt(perPackage);
        int k1 = 2 + r.nextInt(9);
        int k2 = 3 + r.nextInt(17);
        StringBuilder b = new StringBuilder(6000);
        b.append("package gen.p").append(p).append(";\n\n")
                .append("import java.util.ArrayList;\n")
                .append("import java.util.HashMap;\n")
                .append("import java.util.Iterator;\n")
                .append("import java.util.List;\n")
                .append("import java.util.Map;\n")
                .append("import java.util.NoSuchElementException;\n")
                .append("import java.util.stream.Collectors;\n\n")
                .append("public class ").append(name)
                .append(root ? " implements Shape" + p : " extends Node" + p + "_" + (c - 1)).append(" {\n")
                .append("    private final int id;\n")
                .append("    private final List<String> names = new ArrayList<>();\n")
                .append("    protected final Map<String, Integer> counts = new HashMap<>();\n")
                .append("    private Color").append(p).append(" color = Color").append(p).append(".values()[")
                .append(r.nextInt(5)).append("];\n\n")
                .append("    public ").append(name).append("(int id) {\n")
                .append(root ? "" : "        super(id + 1);\n")
                .append("        this.id = id;\n")
                .append("        for (int i = 0; i < ").append(k1).append("; i++) {\n")
                .append("            names.add(\"n\" + (id * ").append(k2).append(" + i));\n")
                .append("        }\n")
                .append("    }\n\n")
                .append("    @Override\n")
                .append("    public int id() {\n")
                .append("        return id;\n")
                .append("    }\n\n")
                // a static nested class
                .append("    public static final class Key implements Comparable<Key> {\n")
                .append("        final String name;\n")
                .append("        final int rank;\n\n")
                .append("        Key(String name, int rank) {\n")
                .append("            this.name = name;\n")
                .append("            this.rank = rank;\n")
                .append("        }\n\n")
                .append("        @Override\n")
                .append("        public int compareTo(Key o) {\n")
                .append("            int c = Integer.compare(rank, o.rank);\n")
                .append("            return c != 0 ? c : name.compareTo(o.name);\n")
                .append("        }\n")
                .append("    }\n\n")
                // an inner class
                .append("    public class Cursor implements Iterator<String> {\n")
                .append("        private int at;\n\n")
                .append("        @Override\n")
                .append("        public boolean hasNext() {\n")
                .append("            return at < names.size();\n")
                .append("        }\n\n")
                .append("        @Override\n")
                .append("        public String next() {\n")
                .append("            if (!hasNext()) {\n")
                .append("                throw new NoSuchElementException();\n")
                .append("            }\n")
                .append("            return names.get(at++) + \"@\" + id;\n")
                .append("        }\n")
                .append("    }\n\n")
                .append("    public <T extends Comparable<? super T>> T max(List<? extends T> xs) {\n")
                .append("        T best = null;\n")
                .append("        for (T x : xs) {\n")
                .append("            if (best == null || x.compareTo(best) > 0) {\n")
                .append("                best = x;\n")
                .append("            }\n")
                .append("        }\n")
                .append("        return best;\n")
                .append("    }\n\n")
                .append("    public int compute").append("(int n) {\n")
                .append("        int s = ").append(r.nextInt(100)).append(";\n")
                .append("        for (int i = 0; i < n; i++) {\n")
                .append("            switch (i % 4) {\n")
                .append("                case 0:\n")
                .append("                    s += i * ").append(k1).append(";\n")
                .append("                    break;\n")
                .append("                case 1:\n")
                .append("                    s ^= i << ").append(r.nextInt(8)).append(";\n")
                .append("                    break;\n")
                .append("                case 2:\n")
                .append("                    s -= color.weight();\n")
                .append("                    break;\n")
                .append("                default:\n")
                .append("                    s = s * 31 + names.size();\n")
                .append("                    break;\n")
                .append("            }\n")
                .append("        }\n")
                .append("        return s;\n")
                .append("    }\n\n")
                .append("    public String describe() {\n")
                .append("        StringBuilder b = new StringBuilder(\"").append(name).append("\");\n")
                .append("        for (Cursor it = new Cursor(); it.hasNext();) {\n")
                .append("            b.append(' ').append(it.next());\n")
                .append("        }\n")
                .append("        counts.merge(b.toString(), 1, Integer::sum);\n")
                .append("        return b.toString();\n")
                .append("    }\n\n")
                .append("    public Runnable task(final List<String> sink) {\n")
                .append("        return new Runnable() {\n")
                .append("            @Override\n")
                .append("            public void run() {\n")
                .append("                List<Key> keys = new ArrayList<>();\n")
                .append("                for (String n : names) {\n")
                .append("                    keys.add(new Key(n, compute(n.length())));\n")
                .append("                }\n")
                .append("                sink.add(max(keys).name);\n")
                .append("                color = color.next();\n")
                .append("            }\n")
                .append("        };\n")
                .append("    }\n\n")
                .append("    public List<Integer> transform(List<Integer> in) {\n")
                .append("        return in.stream().map(x -> x * ").append(k2).append(" + id).filter(x -> x % ")
                .append(k1).append(" != 0)\n")
                .append("                .sorted().collect(Collectors.toList());\n")
                .append("    }\n\n")
                .append("    public int callOther(").append(other).append(" o) {\n")
                .append("        Box").append(p).append("<Integer> box = new Box").append(p)
                .append(".Builder<Integer>().with(1, 2, ").append(k2).append(").build();\n")
                .append("        return o.compute(").append(k1).append(") + box.map(x -> x + o.id()).max()")
                .append(" + o.transform(List.of(1, 2, 3)).size();\n")
                .append("    }\n")
                .append("}\n");
        return b.toString();
    }
}
