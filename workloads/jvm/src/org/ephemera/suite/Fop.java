package org.ephemera.suite;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.sax.SAXResult;
import javax.xml.transform.stream.StreamSource;
import org.apache.fop.apps.FOUserAgent;
import org.apache.fop.apps.FopFactory;
import org.apache.fop.apps.MimeConstants;

/** fop: renders a generated XSL-FO document to PDF in memory with Apache FOP. */
final class Fop implements Workload {
    private int pages;
    private byte[] fo;
    private FopFactory factory;
    private TransformerFactory transformers;
    private byte[] pdf;
    private int pageCount;
    private int firstSize = -1;

    @Override
    public void setup(boolean small) {
        pages = small ? 12 : 40;
        fo = FoDocument.generate(pages, 0xF0F0L).getBytes(StandardCharsets.UTF_8);
        // No configuration: the base-14 fonts only, no scan of the system's fonts.
        factory = FopFactory.newInstance(new File(System.getProperty("java.io.tmpdir")).toURI());
        transformers = TransformerFactory.newInstance();
    }

    @Override
    public void iterate(Events events) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 20);
        FOUserAgent agent = factory.newFOUserAgent();
        agent.setCreationDate(new Date(0)); // the same bytes every iteration
        agent.setProducer("ephemera");
        org.apache.fop.apps.Fop fop = factory.newFop(MimeConstants.MIME_PDF, agent, out);
        Transformer identity = transformers.newTransformer();
        identity.transform(new StreamSource(new ByteArrayInputStream(fo)), new SAXResult(fop.getDefaultHandler()));
        pageCount = fop.getResults().getPageCount();
        pdf = out.toByteArray();
    }

    @Override
    public String check() {
        String head = new String(pdf, 0, Math.min(pdf.length, 5), StandardCharsets.ISO_8859_1);
        if (!head.equals("%PDF-")) {
            return "the output does not start with %PDF- (" + pdf.length + " bytes)";
        }
        String tail = new String(pdf, Math.max(0, pdf.length - 16), Math.min(pdf.length, 16), StandardCharsets.ISO_8859_1);
        if (!tail.contains("%%EOF")) {
            return "the PDF does not end with %%EOF";
        }
        if (pageCount != pages) {
            return "FOP laid out " + pageCount + " pages, expected " + pages;
        }
        int pageObjects = countPageObjects(pdf);
        if (pageObjects != pages) {
            return "the PDF has " + pageObjects + " page objects, expected " + pages;
        }
        if (firstSize < 0) {
            firstSize = pdf.length;
        } else if (pdf.length != firstSize) {
            return "the PDF has " + pdf.length + " bytes, the first iteration's had " + firstSize;
        }
        return null;
    }

    /** Occurrences of "/Type /Page" not followed by 's' (the page objects; FOP writes them uncompressed). */
    private static int countPageObjects(byte[] pdf) {
        byte[] key = "/Type /Page".getBytes(StandardCharsets.ISO_8859_1);
        int n = 0;
        outer:
        for (int i = 0; i + key.length < pdf.length; i++) {
            for (int k = 0; k < key.length; k++) {
                if (pdf[i + k] != key[k]) {
                    continue outer;
                }
            }
            if (pdf[i + key.length] != 's') {
                n++;
            }
        }
        return n;
    }
}
