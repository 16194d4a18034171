package org.ephemera.suite;

import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.IntField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.store.RAMDirectory;
import org.apache.lucene.util.Version;

/**
 * luindex: indexes a generated corpus with Lucene 4.10 (StandardAnalyzer,
 * IndexWriter's default merge policy) into a fresh RAMDirectory each
 * iteration.
 */
final class LuIndex implements Workload {
    private Corpus corpus;
    private String probe;
    private int probeDocs;
    private RAMDirectory directory;

    @Override
    public void setup(boolean small) {
        corpus = small ? new Corpus(1500, 150, 0x1DE) : new Corpus(6000, 150, 0x1DE);
        probe = corpus.words.get(7); // a common word (not a stop word)
        probeDocs = corpus.bodyDocFreq(probe);
    }

    @Override
    public void iterate(Events events) throws Exception {
        directory = new RAMDirectory();
        IndexWriterConfig config = new IndexWriterConfig(Version.LUCENE_4_10_4, new StandardAnalyzer());
        IndexWriter writer = new IndexWriter(directory, config);
        for (Corpus.Doc d : corpus.docs) {
            writer.addDocument(document(d));
        }
        writer.commit();
        // Closed only on success, not by try-with-resources: after an
        // OutOfMemoryError, Lucene 4.10's close() can wait forever.
        writer.close();
    }

    /** The Lucene document of d: id and year stored, title stored and analysed, body analysed only. */
    static Document document(Corpus.Doc d) {
        Document doc = new Document();
        doc.add(new StringField("id", d.id, Field.Store.YES));
        doc.add(new TextField("title", d.title, Field.Store.YES));
        doc.add(new TextField("body", d.body, Field.Store.NO));
        doc.add(new IntField("year", d.year, Field.Store.YES));
        return doc;
    }

    @Override
    public String check() throws Exception {
        try (DirectoryReader reader = DirectoryReader.open(directory)) {
            if (reader.numDocs() != corpus.docs.length) {
                return "the index has " + reader.numDocs() + " documents, expected " + corpus.docs.length;
            }
            int df = reader.docFreq(new Term("body", probe));
            if (df != probeDocs) {
                return "'" + probe + "' is in " + df + " indexed bodies, expected " + probeDocs;
            }
        } finally {
            directory.close();
            directory = null;
        }
        return null;
    }
}
