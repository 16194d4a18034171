package org.ephemera.suite;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * h2: TPC-C-like transactions over JDBC on an in-memory H2 database, one
 * client thread per warehouse, each transaction one latency event.  Setup
 * loads the database into schema BASE and copies it to schema RUN, where
 * the iterations run; prepare (untimed) puts RUN back as BASE is, so every
 * iteration does the same work.
 */
final class H2 implements Workload {
    private static final int CLIENTS = 2;
    // A lock timeout long enough for a client waiting for the other's row
    // locks through a long collector pause on a small heap.
    private static final String URL = "jdbc:h2:mem:ephemera-h2;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=30000";

    private TpccLoader db;
    private TpccInput input;
    private Connection admin;
    private final Connection[] connections = new Connection[CLIENTS];
    private long baseOrders;
    private long baseNewOrders;
    private long baseLines;
    private BigDecimal baseHistory;
    private BigDecimal baseYtd;
    private BigDecimal orderTotals;
    private int brandLines;
    private BigDecimal firstOrderTotals;
    private int firstBrandLines;

    @Override
    public void setup(boolean small) throws Exception {
        db = small ? new TpccLoader(CLIENTS, 5000, 300, 120) : new TpccLoader(CLIENTS, 10000, 600, 120);
        admin = DriverManager.getConnection(URL);
        admin.setAutoCommit(false);
        db.load(admin, 0x7CC);
        input = new TpccInput(db, small ? 300 : 1200, 0x7CC);
        if (input.deliveriesPerWarehouseMax > db.orders - db.firstNewOrder + 1) {
            throw new IllegalStateException("more deliveries than undelivered orders per district");
        }
        TpccSchema.copy(admin, "BASE", "RUN");
        for (int i = 0; i < CLIENTS; i++) {
            connections[i] = DriverManager.getConnection(URL);
            connections[i].setAutoCommit(false);
            connections[i].setSchema("RUN");
        }
        baseOrders = count("SELECT COUNT(*) FROM BASE.orders");
        baseNewOrders = count("SELECT COUNT(*) FROM BASE.new_order");
        baseLines = count("SELECT COUNT(*) FROM BASE.order_line");
        baseHistory = sum("SELECT SUM(h_amount) FROM BASE.history");
        baseYtd = sum("SELECT SUM(w_ytd) FROM BASE.warehouse");
    }

    @Override
    public void prepare() throws SQLException {
        TpccSchema.restore(admin, db);
    }

    @Override
    public void iterate(Events events) throws Exception {
        BigDecimal[] totals = new BigDecimal[CLIENTS];
        int[] brands = new int[CLIENTS];
        Parallel.run("h2", CLIENTS, t -> {
            try (TpccClient client = new TpccClient(connections[t])) {
                for (TpccInput.Txn txn : input.clients.get(t)) {
                    long start = System.nanoTime();
                    client.run(txn);
                    events.record(start, System.nanoTime());
                }
                totals[t] = client.orderTotals;
                brands[t] = client.brandLines;
            }
        });
        orderTotals = BigDecimal.ZERO;
        brandLines = 0;
        for (int t = 0; t < CLIENTS; t++) {
            orderTotals = orderTotals.add(totals[t]);
            brandLines += brands[t];
        }
    }

    @Override
    public String check() throws SQLException {
        long deliveries = 0;
        for (List<TpccInput.Txn> list : input.clients) {
            for (TpccInput.Txn t : list) {
                deliveries += t.kind == TpccInput.Kind.DELIVERY ? 1 : 0;
            }
        }
        long orders = count("SELECT COUNT(*) FROM RUN.orders");
        if (orders != baseOrders + input.committedNewOrders) {
            return "orders: " + orders + ", expected " + baseOrders + " + " + input.committedNewOrders + " new";
        }
        long newOrders = count("SELECT COUNT(*) FROM RUN.new_order");
        long expected = baseNewOrders + input.committedNewOrders - deliveries * TpccLoader.DISTRICTS;
        if (newOrders != expected) {
            return "new_order rows: " + newOrders + ", expected " + expected;
        }
        long lines = count("SELECT COUNT(*) FROM RUN.order_line");
        if (lines != baseLines + input.committedOrderLines
                || lines != count("SELECT SUM(o_ol_cnt) FROM RUN.orders")) {
            return "order_line rows: " + lines + ", expected " + (baseLines + input.committedOrderLines)
                    + " and the orders' line counts";
        }
        // TPC-C consistency conditions 1 and 2: warehouse YTD = sum of its
        // districts' YTD; next order id - 1 = the district's last order.
        if (count("SELECT COUNT(*) FROM RUN.warehouse w WHERE w_ytd <>"
                + " (SELECT SUM(d_ytd) FROM RUN.district WHERE d_w_id = w.w_id)") != 0) {
            return "a warehouse's YTD differs from the sum of its districts'";
        }
        if (count("SELECT COUNT(*) FROM RUN.district WHERE d_next_o_id - 1 <>"
                + " (SELECT MAX(o_id) FROM RUN.orders WHERE o_w_id = d_w_id AND o_d_id = d_id)") != 0) {
            return "a district's next order id does not follow its last order";
        }
        BigDecimal history = sum("SELECT SUM(h_amount) FROM RUN.history");
        BigDecimal ytd = sum("SELECT SUM(w_ytd) FROM RUN.warehouse");
        if (history.compareTo(baseHistory.add(input.payments)) != 0
                || ytd.compareTo(baseYtd.add(input.payments)) != 0) {
            return "payments: history " + history + ", YTD " + ytd + ", expected both to grow by " + input.payments;
        }
        if (firstOrderTotals == null) {
            firstOrderTotals = orderTotals;
            firstBrandLines = brandLines;
        } else if (orderTotals.compareTo(firstOrderTotals) != 0 || brandLines != firstBrandLines) {
            return "new-orders came to " + orderTotals + " (" + brandLines + " brand lines), the first iteration's to "
                    + firstOrderTotals + " (" + firstBrandLines + ")";
        }
        admin.commit();
        return null;
    }

    @Override
    public void teardown() throws SQLException {
        for (Connection c : connections) {
            c.close();
        }
        try (Statement s = admin.createStatement()) {
            s.execute("DROP ALL OBJECTS");
        }
        admin.close();
    }

    @Override
    public boolean latency() {
        return true;
    }

    private long count(String sql) throws SQLException {
        try (Statement s = admin.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    private BigDecimal sum(String sql) throws SQLException {
        try (Statement s = admin.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getBigDecimal(1);
        }
    }
}
