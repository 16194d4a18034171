package org.ephemera.suite;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import javax.xml.transform.Templates;
import javax.xml.transform.Transformer;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

/**
 * xalan: transforms generated XML documents to HTML with Apache Xalan's
 * interpretive processor (not the JDK's XSLTC), several threads taking
 * documents from a shared counter.  The stylesheet (resource
 * xalan_report.xsl) is compiled once in setup.
 */
final class Xalan implements Workload {
    private static final int THREADS = 2;

    private byte[][] documents;
    private Templates templates;
    private long[] checksums;
    private int[] sizes;
    private long[] firstChecksums;

    @Override
    public void setup(boolean small) throws Exception {
        Words words = new Words(4000, 0xA1A);
        documents = new byte[small ? 8 : 36][];
        for (int i = 0; i < documents.length; i++) {
            documents[i] = XalanInput.document(i, 200, words, 0xA1A);
        }
        org.apache.xalan.processor.TransformerFactoryImpl factory =
                new org.apache.xalan.processor.TransformerFactoryImpl();
        try (InputStream xsl = Xalan.class.getResourceAsStream("xalan_report.xsl")) {
            templates = factory.newTemplates(new StreamSource(xsl));
        }
        checksums = new long[documents.length];
        sizes = new int[documents.length];
    }

    @Override
    public void iterate(Events events) throws Exception {
        AtomicInteger next = new AtomicInteger();
        Parallel.run("xalan", THREADS, t -> {
            for (int i = next.getAndIncrement(); i < documents.length; i = next.getAndIncrement()) {
                Transformer transformer = templates.newTransformer();
                ByteArrayOutputStream out = new ByteArrayOutputStream(documents[i].length);
                transformer.transform(new StreamSource(new ByteArrayInputStream(documents[i])), new StreamResult(out));
                CRC32 crc = new CRC32();
                crc.update(out.toByteArray());
                checksums[i] = crc.getValue();
                sizes[i] = out.size();
            }
        });
    }

    @Override
    public String check() {
        for (int i = 0; i < documents.length; i++) {
            if (sizes[i] < documents[i].length / 4) {
                return "document " + i + " made only " + sizes[i] + " bytes of HTML";
            }
        }
        if (firstChecksums == null) {
            firstChecksums = checksums.clone();
        }
        for (int i = 0; i < documents.length; i++) {
            if (checksums[i] != firstChecksums[i]) {
                return String.format("document %d's output has CRC-32 %08x, the first iteration's %08x", i,
                        checksums[i], firstChecksums[i]);
            }
        }
        java.util.Arrays.fill(sizes, 0);
        java.util.Arrays.fill(checksums, -1);
        return null;
    }
}
