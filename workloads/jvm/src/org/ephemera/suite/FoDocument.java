package org.ephemera.suite;

import java.util.Locale;
import java.util.Random;

/**
 * A generated XSL-FO document: one A4 page per section, each with a
 * heading, justified paragraphs, a table and a list, sized to fit its page,
 * so the PDF has exactly as many pages as there are sections.  Only the
 * base-14 fonts (Helvetica, Times, Courier) are used.
 */
final class FoDocument {
    private FoDocument() {
    }

    static String generate(int sections, long seed) {
        Random r = new Random(seed);
        Words words = new Words(3000, seed);
        StringBuilder b = new StringBuilder(sections * 6000);
        b.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
                .append("<fo:root xmlns:fo=\"http://www.w3.org/1999/XSL/Format\">\n")
                .append("<fo:layout-master-set><fo:simple-page-master master-name=\"A4\" page-height=\"29.7cm\"")
                .append(" page-width=\"21cm\" margin=\"1.5cm\">")
                .append("<fo:region-body margin-top=\"1.2cm\" margin-bottom=\"1.2cm\"/>")
                .append("<fo:region-before extent=\"1cm\"/><fo:region-after extent=\"1cm\"/>")
                .append("</fo:simple-page-master></fo:layout-master-set>\n")
                .append("<fo:page-sequence master-reference=\"A4\">\n")
                .append("<fo:static-content flow-name=\"xsl-region-before\"><fo:block font-family=\"Helvetica\"")
                .append(" font-size=\"8pt\" text-align=\"end\" border-bottom=\"0.5pt solid black\">Ephemera fop workload")
                .append("</fo:block></fo:static-content>\n")
                .append("<fo:static-content flow-name=\"xsl-region-after\"><fo:block font-family=\"Helvetica\"")
                .append(" font-size=\"8pt\" text-align=\"center\">page <fo:page-number/></fo:block></fo:static-content>\n")
                .append("<fo:flow flow-name=\"xsl-region-body\" font-family=\"Times\" font-size=\"10pt\">\n");
        for (int s = 0; s < sections; s++) {
            b.append("<fo:block").append(s > 0 ? " break-before=\"page\"" : "")
                    .append(" font-family=\"Helvetica\" font-size=\"14pt\" font-weight=\"bold\" space-after=\"6pt\">")
                    .append(s + 1).append(". ").append(capital(words.text(r, 4 + r.nextInt(4)))).append("</fo:block>\n");
            for (int p = 0; p < 3; p++) {
                b.append("<fo:block text-align=\"justify\" space-after=\"4pt\"")
                        .append(p == 1 ? " font-style=\"italic\"" : "").append(">")
                        .append(capital(words.text(r, 60 + r.nextInt(40)))).append("</fo:block>\n");
            }
            table(b, r, words);
            b.append("<fo:list-block provisional-distance-between-starts=\"1cm\" space-before=\"6pt\">\n");
            for (int i = 0; i < 5; i++) {
                b.append("<fo:list-item><fo:list-item-label end-indent=\"label-end()\"><fo:block>")
                        .append((char) ('a' + i)).append(")</fo:block></fo:list-item-label>")
                        .append("<fo:list-item-body start-indent=\"body-start()\"><fo:block font-family=\"Courier\"")
                        .append(" font-size=\"9pt\">").append(words.text(r, 6 + r.nextInt(6)))
                        .append("</fo:block></fo:list-item-body></fo:list-item>\n");
            }
            b.append("</fo:list-block>\n");
        }
        b.append("</fo:flow></fo:page-sequence></fo:root>\n");
        return b.toString();
    }

    private static void table(StringBuilder b, Random r, Words words) {
        b.append("<fo:table table-layout=\"fixed\" width=\"100%\" border-collapse=\"separate\" space-before=\"6pt\">")
                .append("<fo:table-column column-width=\"12%\"/><fo:table-column column-width=\"48%\"/>")
                .append("<fo:table-column column-width=\"20%\"/><fo:table-column column-width=\"20%\"/>\n")
                .append("<fo:table-header font-weight=\"bold\" background-color=\"#dddddd\"><fo:table-row>");
        for (String h : new String[] {"No.", "Item", "Quantity", "Amount"}) {
            b.append("<fo:table-cell border=\"0.5pt solid black\" padding=\"2pt\"><fo:block>").append(h)
                    .append("</fo:block></fo:table-cell>");
        }
        b.append("</fo:table-row></fo:table-header>\n<fo:table-body font-size=\"9pt\">\n");
        for (int row = 0; row < 14; row++) {
            String[] cells = {
                Integer.toString(row + 1),
                words.text(r, 2 + r.nextInt(5)),
                Integer.toString(1 + r.nextInt(500)),
                String.format(Locale.ROOT, "%.2f", r.nextInt(1_000_000) / 100.0),
            };
            b.append("<fo:table-row>");
            for (int c = 0; c < cells.length; c++) {
                b.append("<fo:table-cell border=\"0.5pt solid black\" padding=\"2pt\"")
                        .append(c >= 2 ? " text-align=\"end\"" : "").append("><fo:block>").append(cells[c])
                        .append("</fo:block></fo:table-cell>");
            }
            b.append("</fo:table-row>\n");
        }
        b.append("</fo:table-body></fo:table>\n");
    }

    private static String capital(String s) {
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
