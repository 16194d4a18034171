package org.ephemera.suite;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The TPC-C-like schema of the h2 workload (columns trimmed: one district
 * info column in stock, no second address line).  The loaded data lives in
 * schema BASE; the iterations work in schema RUN, a copy of it, which
 * restore() puts back as BASE is between iterations.
 */
final class TpccSchema {
    static final String[] TABLES = {
        "warehouse", "district", "customer", "history", "item", "stock", "orders", "new_order", "order_line",
    };

    private TpccSchema() {
    }

    static void create(Statement s, String schema) throws SQLException {
        s.execute("CREATE SCHEMA " + schema);
        String p = schema + ".";
        s.execute("CREATE TABLE " + p + "warehouse (w_id INT PRIMARY KEY, w_name VARCHAR(10), w_street VARCHAR(20),"
                + " w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2))");
        s.execute("CREATE TABLE " + p + "district (d_w_id INT, d_id INT, d_name VARCHAR(10), d_street VARCHAR(20),"
                + " d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2),"
                + " d_next_o_id INT, PRIMARY KEY (d_w_id, d_id))");
        s.execute("CREATE TABLE " + p + "customer (c_w_id INT, c_d_id INT, c_id INT, c_first VARCHAR(16),"
                + " c_middle CHAR(2), c_last VARCHAR(16), c_street VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2),"
                + " c_zip CHAR(9), c_phone CHAR(16), c_since TIMESTAMP, c_credit CHAR(2), c_credit_lim DECIMAL(12,2),"
                + " c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2),"
                + " c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id))");
        s.execute("CREATE INDEX " + p + "customer_name ON " + p + "customer (c_w_id, c_d_id, c_last, c_first)");
        s.execute("CREATE TABLE " + p + "history (h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT,"
                + " h_date TIMESTAMP, h_amount DECIMAL(6,2), h_data VARCHAR(24))");
        s.execute("CREATE TABLE " + p + "item (i_id INT PRIMARY KEY, i_im_id INT, i_name VARCHAR(24),"
                + " i_price DECIMAL(5,2), i_data VARCHAR(50))");
        s.execute("CREATE TABLE " + p + "stock (s_w_id INT, s_i_id INT, s_quantity INT, s_dist CHAR(24),"
                + " s_ytd INT, s_order_cnt INT, s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))");
        s.execute("CREATE TABLE " + p + "orders (o_w_id INT, o_d_id INT, o_id INT, o_c_id INT, o_entry_d TIMESTAMP,"
                + " o_carrier_id INT, o_ol_cnt INT, o_all_local INT, PRIMARY KEY (o_w_id, o_d_id, o_id))");
        s.execute("CREATE INDEX " + p + "orders_customer ON " + p + "orders (o_w_id, o_d_id, o_c_id, o_id)");
        s.execute("CREATE TABLE " + p + "new_order (no_w_id INT, no_d_id INT, no_o_id INT,"
                + " PRIMARY KEY (no_w_id, no_d_id, no_o_id))");
        s.execute("CREATE TABLE " + p + "order_line (ol_w_id INT, ol_d_id INT, ol_o_id INT, ol_number INT,"
                + " ol_i_id INT, ol_supply_w_id INT, ol_delivery_d TIMESTAMP, ol_quantity INT,"
                + " ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))");
    }

    /** Drops schema `to` if it exists and makes it a copy of schema `from`. */
    static void copy(Connection c, String from, String to) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + to + " CASCADE");
            create(s, to);
            for (String t : TABLES) {
                s.execute("INSERT INTO " + to + "." + t + " SELECT * FROM " + from + "." + t);
            }
        }
        c.commit();
    }

    /**
     * Puts schema RUN back as schema BASE is, rewriting only the rows the
     * transactions can have changed: each of them inserts orders past the
     * loaded ones and history rows dated after the load, delivers loaded
     * orders (o_id >= firstNewOrder), and counts what it does to a customer
     * (c_payment_cnt, c_delivery_cnt) or a stock row (s_order_cnt).
     * Changed rows are deleted and the missing ones copied from BASE.
     */
    static void restore(Connection c, TpccLoader db) throws SQLException {
        int n = db.orders;
        int f = db.firstNewOrder;
        try (Statement s = c.createStatement()) {
            s.execute("DELETE FROM RUN.warehouse");
            s.execute("INSERT INTO RUN.warehouse SELECT * FROM BASE.warehouse");
            s.execute("DELETE FROM RUN.district");
            s.execute("INSERT INTO RUN.district SELECT * FROM BASE.district");
            s.execute("DELETE FROM RUN.history WHERE h_date <> TIMESTAMP '" + TpccLoader.EPOCH + "'");
            reinsert(s, "customer", "c_payment_cnt <> 1 OR c_delivery_cnt <> 0", "TRUE", "c_w_id", "c_d_id", "c_id");
            reinsert(s, "stock", "s_order_cnt <> 0", "TRUE", "s_w_id", "s_i_id");
            reinsert(s, "orders", "o_id > " + n + " OR o_id >= " + f + " AND o_carrier_id IS NOT NULL",
                    "o_id >= " + f, "o_w_id", "o_d_id", "o_id");
            reinsert(s, "order_line", "ol_o_id > " + n + " OR ol_o_id >= " + f + " AND ol_delivery_d IS NOT NULL",
                    "ol_o_id >= " + f, "ol_w_id", "ol_d_id", "ol_o_id", "ol_number");
            reinsert(s, "new_order", "no_o_id > " + n, "TRUE", "no_w_id", "no_d_id", "no_o_id");
        }
        c.commit();
    }

    /** Deletes RUN's rows where `changed`, then copies BASE's rows where `range` that RUN lacks. */
    private static void reinsert(Statement s, String table, String changed, String range, String... key)
            throws SQLException {
        StringBuilder same = new StringBuilder();
        for (String k : key) {
            same.append(same.length() == 0 ? "" : " AND ").append("r.").append(k).append(" = b.").append(k);
        }
        s.execute("DELETE FROM RUN." + table + " WHERE " + changed);
        s.execute("INSERT INTO RUN." + table + " SELECT * FROM BASE." + table + " b WHERE (" + range + ")"
                + " AND NOT EXISTS (SELECT 1 FROM RUN." + table + " r WHERE " + same + ")");
    }
}
