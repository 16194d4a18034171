package org.ephemera.suite;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.RAMDirectory;
import org.apache.lucene.util.Version;

/**
 * lusearch: a fixed list of queries (terms, boolean, phrase, prefix,
 * wildcard, fuzzy, field and range queries, parsed by the classic
 * QueryParser) against an index built in setup, from several threads; each
 * query (parse, search top 10, load the hits' stored fields) is one latency
 * event.
 */
final class LuSearch implements Workload {
    private static final int THREADS = 2;

    private RAMDirectory directory;
    private DirectoryReader reader;
    private IndexSearcher searcher;
    private String[] queries;
    private int[] hits;
    private int[] firstHits;

    @Override
    public void setup(boolean small) throws Exception {
        Corpus corpus = new Corpus(small ? 4000 : 12000, 150, 0x5EA);
        directory = new RAMDirectory();
        IndexWriterConfig config = new IndexWriterConfig(Version.LUCENE_4_10_4, new StandardAnalyzer());
        IndexWriter writer = new IndexWriter(directory, config);
        for (Corpus.Doc d : corpus.docs) {
            writer.addDocument(LuIndex.document(d));
        }
        writer.forceMerge(1);
        writer.close(); // only on success, as in LuIndex
        reader = DirectoryReader.open(directory);
        searcher = new IndexSearcher(reader);
        queries = queries(corpus, small ? 600 : 2400, new Random(0x5EA));
        hits = new int[queries.length];
    }

    /** Query strings of the kinds a search box gets, from the corpus's words. */
    private static String[] queries(Corpus corpus, int count, Random r) {
        Words w = corpus.words;
        List<String> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String a = w.pick(r);
            String b = w.pick(r);
            switch (i % 10) {
                case 0: list.add(a); break;
                case 1: list.add(a + " " + b); break;
                case 2: list.add("+" + a + " +" + b); break;
                case 3: list.add("\"" + adjacent(corpus, r) + "\""); break;
                case 4: list.add(a.substring(0, Math.min(3, a.length())) + "*"); break;
                case 5: list.add(a.charAt(0) + "?" + a.substring(2, Math.min(4, a.length())) + "*"); break;
                case 6: list.add(w.get(100 + r.nextInt(w.size() - 100)) + "~"); break;
                case 7: list.add("title:" + a + " " + b); break;
                case 8: list.add("+" + a + " -" + b + " year:[2000 TO 2010]"); break;
                default: list.add("(" + a + " OR " + b + ") AND title:" + w.pick(r)); break;
            }
        }
        return list.toArray(new String[0]);
    }

    /** Two words that follow each other in some document's body. */
    private static String adjacent(Corpus corpus, Random r) {
        String[] t = corpus.docs[r.nextInt(corpus.docs.length)].body.split("[ .]+");
        int at = r.nextInt(t.length - 1);
        return t[at] + " " + t[at + 1];
    }

    @Override
    public void iterate(Events events) throws Exception {
        Parallel.run("lusearch", THREADS, t -> {
            Analyzer analyzer = new StandardAnalyzer();
            QueryParser parser = new QueryParser("body", analyzer);
            for (int q = t; q < queries.length; q += THREADS) {
                long start = System.nanoTime();
                TopDocs top = searcher.search(parser.parse(queries[q]), 10);
                for (ScoreDoc d : top.scoreDocs) {
                    searcher.doc(d.doc).get("title");
                }
                hits[q] = top.totalHits;
                events.record(start, System.nanoTime());
            }
            analyzer.close();
        });
    }

    @Override
    public String check() {
        long total = 0;
        for (int h : hits) {
            total += h;
        }
        if (total == 0) {
            return "no query found anything";
        }
        if (firstHits == null) {
            firstHits = hits.clone();
        }
        for (int q = 0; q < hits.length; q++) {
            if (hits[q] != firstHits[q]) {
                return "query " + q + " (" + queries[q] + ") found " + hits[q] + " documents, "
                        + firstHits[q] + " in the first iteration";
            }
        }
        java.util.Arrays.fill(hits, -1);
        return null;
    }

    @Override
    public void teardown() throws Exception {
        reader.close();
        directory.close();
    }

    @Override
    public boolean latency() {
        return true;
    }
}
