package org.ephemera.suite;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;

/** The xalan workload's input: XMark-like auction-site documents (items, people, auctions with bids). */
final class XalanInput {
    private static final String[] CATEGORIES = {
        "antiques", "books", "clocks", "coins", "maps", "music", "pottery", "stamps", "textiles", "tools",
    };

    private XalanInput() {
    }

    static byte[] document(int index, int items, Words words, long seed) {
        Random r = new Random(seed + index);
        int people = items / 2;
        StringBuilder b = new StringBuilder(items * 700);
        b.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
                .append("<!DOCTYPE site [<!ATTLIST item id ID #REQUIRED>]>\n")
                .append("<site name=\"").append(words.pick(r)).append('-').append(index).append("\">\n<items>\n");
        for (int i = 0; i < items; i++) {
            b.append("<item id=\"item").append(i).append("\" category=\"")
                    .append(CATEGORIES[r.nextInt(CATEGORIES.length)]).append("\" price=\"")
                    .append(String.format(Locale.ROOT, "%.2f", 1 + r.nextInt(100000) / 100.0))
                    .append("\" seller=\"person").append(r.nextInt(people)).append("\">")
                    .append("<name>").append(words.text(r, 2 + r.nextInt(3)).replace(".", "")).append("</name>")
                    .append("<description><text>").append(words.text(r, 20 + r.nextInt(60)))
                    .append("</text></description></item>\n");
        }
        b.append("</items>\n<people>\n");
        for (int p = 0; p < people; p++) {
            String name = words.pick(r) + " " + words.pick(r);
            b.append("<person id=\"person").append(p).append("\"><name>").append(name).append("</name><email>")
                    .append(name.replace(' ', '.')).append("@example.org</email><profile interests=\"")
                    .append(words.pick(r)).append(r.nextInt(8) == 0 ? " rare" : "").append("\"/></person>\n");
        }
        b.append("</people>\n<auctions>\n");
        for (int a = 0; a < items / 2; a++) {
            double start = 1 + r.nextInt(50000) / 100.0;
            b.append("<auction id=\"auction").append(a).append("\" item=\"item").append(r.nextInt(items))
                    .append("\" start=\"").append(String.format(Locale.ROOT, "%.2f", start)).append("\">");
            int bids = r.nextInt(8);
            double amount = start;
            for (int k = 0; k < bids; k++) {
                amount += 1 + r.nextInt(2000) / 100.0;
                b.append("<bid person=\"person").append(r.nextInt(people)).append("\" amount=\"")
                        .append(String.format(Locale.ROOT, "%.2f", amount)).append("\"/>");
            }
            b.append("</auction>\n");
        }
        b.append("</auctions>\n</site>\n");
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }
}
