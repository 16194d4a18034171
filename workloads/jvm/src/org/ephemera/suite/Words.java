package org.ephemera.suite;

import java.util.Random;

/**
 * Deterministic pseudo-text: a vocabulary of made-up words built from
 * syllables, drawn with a skewed (roughly Zipf-like) frequency so that a
 * few words are very common and most are rare, as in real text.
 */
final class Words {
    private static final String[] SYLLABLES = {
        "ka", "lo", "mi", "ren", "tas", "vo", "qui", "dem", "sul", "par", "ni", "gor", "tel", "ba", "xu", "fen",
        "ri", "mon", "sa", "ter", "cla", "vin", "do", "hap", "zi", "lu", "ot", "bre", "an", "es", "il", "um",
    };

    private final String[] vocabulary;

    Words(int size, long seed) {
        Random r = new Random(seed);
        vocabulary = new String[size];
        java.util.HashSet<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < size; i++) {
            String w;
            do {
                StringBuilder b = new StringBuilder();
                int n = 1 + r.nextInt(3) + (i > 100 ? 1 : 0);
                for (int k = 0; k < n; k++) {
                    b.append(SYLLABLES[r.nextInt(SYLLABLES.length)]);
                }
                w = b.toString();
            } while (!seen.add(w));
            vocabulary[i] = w;
        }
    }

    int size() {
        return vocabulary.length;
    }

    String get(int i) {
        return vocabulary[i];
    }

    /** A word, the low ranks far more often than the high ones. */
    String pick(Random r) {
        double u = r.nextDouble();
        return vocabulary[(int) (vocabulary.length * u * u * u)];
    }

    /** n words separated by spaces, with a full stop after every 8 to 15. */
    String text(Random r, int n) {
        StringBuilder b = new StringBuilder(n * 8);
        int untilStop = 8 + r.nextInt(8);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                b.append(' ');
            }
            b.append(pick(r));
            if (--untilStop == 0 || i == n - 1) {
                b.append('.');
                untilStop = 8 + r.nextInt(8);
            }
        }
        return b.toString();
    }
}
