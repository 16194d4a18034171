package org.ephemera.suite;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.Random;

/**
 * Loads the h2 workload's initial database into schema BASE, TPC-C style
 * but scaled down: every district has `customers` customers and `orders`
 * orders of random customers, the last three quarters of them undelivered
 * (in new_order).  (TPC-C has as many orders as customers, 30 % undelivered:
 * fewer order lines here make the per-iteration copy cheaper.)
 */
final class TpccLoader {
    static final int DISTRICTS = 10;
    static final Timestamp EPOCH = Timestamp.valueOf("2020-01-01 00:00:00");
    private static final String[] SYLLABLES = {
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    };

    final int warehouses;
    final int items;
    final int customers;
    final int orders;
    /** lastNames[w-1][d-1][c-1], for the transactions that look customers up by name. */
    final String[][][] lastNames;
    final int firstNewOrder;

    TpccLoader(int warehouses, int items, int customers, int orders) {
        this.warehouses = warehouses;
        this.items = items;
        this.customers = customers;
        this.orders = orders;
        this.lastNames = new String[warehouses][DISTRICTS][customers];
        this.firstNewOrder = orders / 4 + 1;
    }

    static String lastName(int n) {
        return SYLLABLES[n / 100] + SYLLABLES[n / 10 % 10] + SYLLABLES[n % 10];
    }

    void load(Connection c, long seed) throws SQLException {
        Random r = new Random(seed);
        try (Statement s = c.createStatement()) {
            TpccSchema.create(s, "BASE");
        }
        try (PreparedStatement p = c.prepareStatement("INSERT INTO BASE.item VALUES (?,?,?,?,?)")) {
            for (int i = 1; i <= items; i++) {
                p.setInt(1, i);
                p.setInt(2, 1 + r.nextInt(10000));
                p.setString(3, alnum(r, 14, 24));
                p.setBigDecimal(4, cents(100 + r.nextInt(9901)));
                p.setString(5, data(r));
                batch(p, i);
            }
            p.executeBatch();
        }
        for (int w = 1; w <= warehouses; w++) {
            loadWarehouse(c, r, w);
        }
        c.commit();
    }

    private void loadWarehouse(Connection c, Random r, int w) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("INSERT INTO BASE.warehouse VALUES (?,?,?,?,?,?,?,?)")) {
            p.setInt(1, w);
            address(p, 2, r);
            p.setBigDecimal(7, new BigDecimal(r.nextInt(2001)).movePointLeft(4));
            p.setBigDecimal(8, cents(30_000_000L));
            p.executeUpdate();
        }
        try (PreparedStatement p = c.prepareStatement("INSERT INTO BASE.stock VALUES (?,?,?,?,?,?,?,?)")) {
            for (int i = 1; i <= items; i++) {
                p.setInt(1, w);
                p.setInt(2, i);
                p.setInt(3, 10 + r.nextInt(91));
                p.setString(4, alnum(r, 24, 24));
                p.setInt(5, 0);
                p.setInt(6, 0);
                p.setInt(7, 0);
                p.setString(8, data(r));
                batch(p, i);
            }
            p.executeBatch();
        }
        for (int d = 1; d <= DISTRICTS; d++) {
            try (PreparedStatement p = c.prepareStatement("INSERT INTO BASE.district VALUES (?,?,?,?,?,?,?,?,?,?)")) {
                p.setInt(1, w);
                p.setInt(2, d);
                address(p, 3, r);
                p.setBigDecimal(8, new BigDecimal(r.nextInt(2001)).movePointLeft(4));
                p.setBigDecimal(9, cents(3_000_000L));
                p.setInt(10, orders + 1);
                p.executeUpdate();
            }
            loadCustomers(c, r, w, d);
            loadOrders(c, r, w, d);
        }
    }

    private void loadCustomers(Connection c, Random r, int w, int d) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("INSERT INTO BASE.customer VALUES"
                + " (?,?,?,?,'OE',?,?,?,?,?,?,?,?,?,?,?,?,1,0,?)");
             PreparedStatement h = c.prepareStatement("INSERT INTO BASE.history VALUES (?,?,?,?,?,?,?,?)")) {
            for (int id = 1; id <= customers; id++) {
                // about three customers per last name, as in TPC-C
                String last = lastName(r.nextInt(Math.min(1000, Math.max(1, customers / 3))));
                lastNames[w - 1][d - 1][id - 1] = last;
                p.setInt(1, w);
                p.setInt(2, d);
                p.setInt(3, id);
                p.setString(4, alnum(r, 8, 16));
                p.setString(5, last);
                p.setString(6, alnum(r, 10, 20));
                p.setString(7, alnum(r, 10, 20));
                p.setString(8, alnum(r, 2, 2));
                p.setString(9, digits(r, 4) + "11111");
                p.setString(10, digits(r, 16));
                p.setTimestamp(11, EPOCH);
                p.setString(12, r.nextInt(10) == 0 ? "BC" : "GC");
                p.setBigDecimal(13, cents(5_000_000L));
                p.setBigDecimal(14, new BigDecimal(r.nextInt(5001)).movePointLeft(4));
                p.setBigDecimal(15, cents(-1000));
                p.setBigDecimal(16, cents(1000));
                p.setString(17, alnum(r, 300, 500));
                batch(p, id);
                h.setInt(1, id);
                h.setInt(2, d);
                h.setInt(3, w);
                h.setInt(4, d);
                h.setInt(5, w);
                h.setTimestamp(6, EPOCH);
                h.setBigDecimal(7, cents(1000));
                h.setString(8, alnum(r, 12, 24));
                batch(h, id);
            }
            p.executeBatch();
            h.executeBatch();
        }
    }

    private void loadOrders(Connection c, Random r, int w, int d) throws SQLException {
        try (PreparedStatement o = c.prepareStatement("INSERT INTO BASE.orders VALUES (?,?,?,?,?,?,?,1)");
             PreparedStatement no = c.prepareStatement("INSERT INTO BASE.new_order VALUES (?,?,?)");
             PreparedStatement ol = c.prepareStatement("INSERT INTO BASE.order_line VALUES (?,?,?,?,?,?,?,?,?,?)")) {
            int lines = 0;
            for (int id = 1; id <= orders; id++) {
                boolean delivered = id < firstNewOrder;
                int count = 5 + r.nextInt(11);
                o.setInt(1, w);
                o.setInt(2, d);
                o.setInt(3, id);
                o.setInt(4, 1 + r.nextInt(customers));
                o.setTimestamp(5, EPOCH);
                if (delivered) {
                    o.setInt(6, 1 + r.nextInt(10));
                } else {
                    o.setNull(6, java.sql.Types.INTEGER);
                }
                o.setInt(7, count);
                batch(o, id);
                if (!delivered) {
                    no.setInt(1, w);
                    no.setInt(2, d);
                    no.setInt(3, id);
                    no.addBatch();
                }
                for (int n = 1; n <= count; n++) {
                    ol.setInt(1, w);
                    ol.setInt(2, d);
                    ol.setInt(3, id);
                    ol.setInt(4, n);
                    ol.setInt(5, 1 + r.nextInt(items));
                    ol.setInt(6, w);
                    ol.setTimestamp(7, delivered ? EPOCH : null);
                    ol.setInt(8, 5);
                    ol.setBigDecimal(9, cents(1 + r.nextInt(999_999)));
                    ol.setString(10, alnum(r, 24, 24));
                    batch(ol, ++lines);
                }
            }
            o.executeBatch();
            no.executeBatch();
            ol.executeBatch();
        }
    }

    private static void batch(PreparedStatement p, int n) throws SQLException {
        p.addBatch();
        if (n % 500 == 0) {
            p.executeBatch();
        }
    }

    private static void address(PreparedStatement p, int at, Random r) throws SQLException {
        p.setString(at, alnum(r, 6, 10));
        p.setString(at + 1, alnum(r, 10, 20));
        p.setString(at + 2, alnum(r, 10, 20));
        p.setString(at + 3, alnum(r, 2, 2));
        p.setString(at + 4, digits(r, 4) + "11111");
    }

    static BigDecimal cents(long n) {
        return BigDecimal.valueOf(n, 2);
    }

    private static String data(Random r) {
        String s = alnum(r, 26, 50);
        if (r.nextInt(10) == 0) { // TPC-C's "ORIGINAL" items and stock
            int at = r.nextInt(s.length() - 8);
            s = s.substring(0, at) + "ORIGINAL" + s.substring(at + 8);
        }
        return s;
    }

    private static String alnum(Random r, int min, int max) {
        int n = min + r.nextInt(max - min + 1);
        char[] b = new char[n];
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(62);
            b[i] = (char) (k < 10 ? '0' + k : k < 36 ? 'a' + k - 10 : 'A' + k - 36);
        }
        return new String(b);
    }

    private static String digits(Random r, int n) {
        char[] b = new char[n];
        for (int i = 0; i < n; i++) {
            b[i] = (char) ('0' + r.nextInt(10));
        }
        return new String(b);
    }
}
