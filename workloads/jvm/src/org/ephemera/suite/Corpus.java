package org.ephemera.suite;

import java.util.Random;

/** Deterministic pseudo-text documents for the Lucene workloads: a title, a body and a year each. */
final class Corpus {
    static final class Doc {
        final String id;
        final String title;
        final String body;
        final int year;

        Doc(String id, String title, String body, int year) {
            this.id = id;
            this.title = title;
            this.body = body;
            this.year = year;
        }
    }

    final Words words;
    final Doc[] docs;
    final long chars;

    /** count documents of 40 + meanWords words on average, from 40 to 40 + 4 * meanWords (uneven, as real files are). */
    Corpus(int count, int meanWords, long seed) {
        words = new Words(20000, seed);
        Random r = new Random(seed);
        docs = new Doc[count];
        long n = 0;
        for (int i = 0; i < count; i++) {
            int length = 40 + (int) (4 * meanWords * r.nextDouble() * r.nextDouble());
            String title = words.text(r, 3 + r.nextInt(6));
            String body = words.text(r, length);
            docs[i] = new Doc("doc" + i, title.substring(0, title.length() - 1), body, 1990 + r.nextInt(35));
            n += title.length() + body.length();
        }
        chars = n;
    }

    /** The number of documents whose body has `word` (tokens split at spaces and full stops). */
    int bodyDocFreq(String word) {
        int n = 0;
        for (Doc d : docs) {
            for (String t : d.body.split("[ .]+")) {
                if (t.equals(word)) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }
}
