package org.ephemera.suite;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;

/**
 * One client of the h2 workload: TPC-C's five transactions over JDBC, on a
 * connection of its own, with statements prepared once per iteration.
 */
final class TpccClient implements AutoCloseable {
    private static final Timestamp NOW = Timestamp.valueOf("2021-06-01 12:00:00");

    private final Connection c;
    private final java.util.List<PreparedStatement> statements = new java.util.ArrayList<>();
    /** What the committed new-orders came to (prices, quantities, discounts and taxes do not change). */
    BigDecimal orderTotals = BigDecimal.ZERO;
    /** Committed order lines whose item and stock are both "ORIGINAL". */
    int brandLines;
    private final PreparedStatement warehouseTax;
    private final PreparedStatement districtNext;
    private final PreparedStatement districtBump;
    private final PreparedStatement customerNewOrder;
    private final PreparedStatement insertOrder;
    private final PreparedStatement insertNewOrder;
    private final PreparedStatement item;
    private final PreparedStatement stock;
    private final PreparedStatement stockUpdate;
    private final PreparedStatement insertLine;
    private final PreparedStatement warehousePay;
    private final PreparedStatement warehouseName;
    private final PreparedStatement districtPay;
    private final PreparedStatement districtName;
    private final PreparedStatement customerByName;
    private final PreparedStatement customerById;
    private final PreparedStatement customerPay;
    private final PreparedStatement customerPayBad;
    private final PreparedStatement insertHistory;
    private final PreparedStatement lastOrder;
    private final PreparedStatement orderLines;
    private final PreparedStatement oldestNewOrder;
    private final PreparedStatement deleteNewOrder;
    private final PreparedStatement orderCustomer;
    private final PreparedStatement orderCarrier;
    private final PreparedStatement linesDelivered;
    private final PreparedStatement linesTotal;
    private final PreparedStatement customerDeliver;
    private final PreparedStatement stockLevel;

    TpccClient(Connection c) throws SQLException {
        this.c = c;
        warehouseTax = prepare("SELECT w_tax FROM warehouse WHERE w_id = ?");
        districtNext = prepare(
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE");
        districtBump = prepare(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?");
        customerNewOrder = prepare("SELECT c_discount, c_last, c_credit FROM customer"
                + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
        insertOrder = prepare("INSERT INTO orders VALUES (?, ?, ?, ?, ?, NULL, ?, ?)");
        insertNewOrder = prepare("INSERT INTO new_order VALUES (?, ?, ?)");
        item = prepare("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?");
        stock = prepare("SELECT s_quantity, s_dist, s_data FROM stock"
                + " WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE");
        stockUpdate = prepare("UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?,"
                + " s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?");
        insertLine = prepare("INSERT INTO order_line VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)");
        warehousePay = prepare("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?");
        warehouseName = prepare(
                "SELECT w_name, w_street, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?");
        districtPay = prepare("UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?");
        districtName = prepare("SELECT d_name, d_street, d_city, d_state, d_zip FROM district"
                + " WHERE d_w_id = ? AND d_id = ?");
        customerByName = prepare("SELECT c_id FROM customer"
                + " WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first");
        customerById = prepare("SELECT c_first, c_middle, c_last, c_street, c_city, c_state, c_zip,"
                + " c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_data FROM customer"
                + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
        customerPay = prepare("UPDATE customer SET c_balance = c_balance - ?,"
                + " c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1"
                + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
        customerPayBad = prepare("UPDATE customer SET c_balance = c_balance - ?,"
                + " c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ?"
                + " WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
        insertHistory = prepare("INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        lastOrder = prepare("SELECT o_id, o_carrier_id, o_entry_d FROM orders"
                + " WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1");
        orderLines = prepare("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d"
                + " FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?");
        oldestNewOrder = prepare(
                "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?");
        deleteNewOrder = prepare(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?");
        orderCustomer = prepare("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?");
        orderCarrier = prepare(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?");
        linesDelivered = prepare("UPDATE order_line SET ol_delivery_d = ?"
                + " WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?");
        linesTotal = prepare("SELECT SUM(ol_amount) FROM order_line"
                + " WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?");
        customerDeliver = prepare("UPDATE customer SET c_balance = c_balance + ?,"
                + " c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?");
        stockLevel = prepare("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock"
                + " WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ?"
                + " AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?");
    }

    void run(TpccInput.Txn t) throws SQLException {
        switch (t.kind) {
            case NEW_ORDER:
                newOrder(t);
                break;
            case PAYMENT:
                payment(t);
                break;
            case ORDER_STATUS:
                orderStatus(t);
                break;
            case DELIVERY:
                delivery(t);
                break;
            default:
                stockLevel(t);
                break;
        }
    }

    private void newOrder(TpccInput.Txn t) throws SQLException {
        BigDecimal wTax = one(bind(warehouseTax, t.w)).getBigDecimal(1);
        ResultSet d = one(bind(districtNext, t.w, t.d));
        BigDecimal dTax = d.getBigDecimal(1);
        int orderId = d.getInt(2);
        bind(districtBump, t.w, t.d).executeUpdate();
        BigDecimal discount = one(bind(customerNewOrder, t.w, t.d, t.cId)).getBigDecimal(1);
        boolean allLocal = true;
        for (int w : t.supplyW) {
            allLocal &= w == t.w;
        }
        bind(insertOrder, t.w, t.d, orderId, t.cId);
        insertOrder.setTimestamp(5, NOW);
        insertOrder.setInt(6, t.itemIds.length);
        insertOrder.setInt(7, allLocal ? 1 : 0);
        insertOrder.executeUpdate();
        bind(insertNewOrder, t.w, t.d, orderId).executeUpdate();
        BigDecimal total = BigDecimal.ZERO;
        for (int n = 0; n < t.itemIds.length; n++) {
            ResultSet i = bind(item, t.itemIds[n]).executeQuery();
            if (!i.next()) { // the 1 % of orders with an unused item
                c.rollback();
                return;
            }
            BigDecimal price = i.getBigDecimal(1);
            String itemData = i.getString(3);
            ResultSet s = one(bind(stock, t.supplyW[n], t.itemIds[n]));
            int quantity = s.getInt(1);
            String dist = s.getString(2);
            String stockData = s.getString(3);
            int q = t.quantities[n];
            quantity = quantity - q >= 10 ? quantity - q : quantity - q + 91;
            bind(stockUpdate, quantity, q, t.supplyW[n] == t.w ? 0 : 1, t.supplyW[n], t.itemIds[n]).executeUpdate();
            BigDecimal amount = price.multiply(BigDecimal.valueOf(q));
            total = total.add(amount);
            bind(insertLine, t.w, t.d, orderId, n + 1, t.itemIds[n], t.supplyW[n], q);
            insertLine.setBigDecimal(8, amount);
            insertLine.setString(9, dist);
            insertLine.executeUpdate();
            if (itemData.contains("ORIGINAL") && stockData.contains("ORIGINAL")) {
                brandLines++; // TPC-C's brand-generic flag
            }
        }
        c.commit();
        orderTotals = orderTotals.add(total.multiply(BigDecimal.ONE.subtract(discount))
                .multiply(BigDecimal.ONE.add(wTax).add(dTax)).setScale(2, RoundingMode.HALF_UP));
    }

    private void payment(TpccInput.Txn t) throws SQLException {
        warehousePay.setBigDecimal(1, t.amount);
        warehousePay.setInt(2, t.w);
        warehousePay.executeUpdate();
        String wName = one(bind(warehouseName, t.w)).getString(1);
        districtPay.setBigDecimal(1, t.amount);
        districtPay.setInt(2, t.w);
        districtPay.setInt(3, t.d);
        districtPay.executeUpdate();
        String dName = one(bind(districtName, t.w, t.d)).getString(1);
        int cId = customerId(t);
        ResultSet cust = one(bind(customerById, t.cW, t.cD, cId));
        if (cust.getString(10).equals("BC")) {
            String data = (cId + " " + t.cD + " " + t.cW + " " + t.d + " " + t.w + " " + t.amount + " | "
                    + cust.getString(14));
            customerPayBad.setBigDecimal(1, t.amount);
            customerPayBad.setBigDecimal(2, t.amount);
            customerPayBad.setString(3, data.length() > 500 ? data.substring(0, 500) : data);
            customerPayBad.setInt(4, t.cW);
            customerPayBad.setInt(5, t.cD);
            customerPayBad.setInt(6, cId);
            customerPayBad.executeUpdate();
        } else {
            customerPay.setBigDecimal(1, t.amount);
            customerPay.setBigDecimal(2, t.amount);
            customerPay.setInt(3, t.cW);
            customerPay.setInt(4, t.cD);
            customerPay.setInt(5, cId);
            customerPay.executeUpdate();
        }
        bind(insertHistory, cId, t.cD, t.cW, t.d, t.w);
        insertHistory.setTimestamp(6, NOW);
        insertHistory.setBigDecimal(7, t.amount);
        insertHistory.setString(8, wName + "    " + dName);
        insertHistory.executeUpdate();
        c.commit();
    }

    private void orderStatus(TpccInput.Txn t) throws SQLException {
        int cId = customerId(t);
        one(bind(customerById, t.cW, t.cD, cId));
        ResultSet o = bind(lastOrder, t.cW, t.cD, cId).executeQuery();
        if (o.next()) {
            ResultSet lines = bind(orderLines, t.cW, t.cD, o.getInt(1)).executeQuery();
            while (lines.next()) {
                lines.getBigDecimal(4);
            }
        }
        c.commit();
    }

    private void delivery(TpccInput.Txn t) throws SQLException {
        for (int d = 1; d <= TpccLoader.DISTRICTS; d++) {
            ResultSet no = one(bind(oldestNewOrder, t.w, d));
            int orderId = no.getInt(1);
            if (no.wasNull()) {
                continue;
            }
            bind(deleteNewOrder, t.w, d, orderId).executeUpdate();
            int cId = one(bind(orderCustomer, t.w, d, orderId)).getInt(1);
            bind(orderCarrier, t.carrier, t.w, d, orderId).executeUpdate();
            linesDelivered.setTimestamp(1, NOW);
            linesDelivered.setInt(2, t.w);
            linesDelivered.setInt(3, d);
            linesDelivered.setInt(4, orderId);
            linesDelivered.executeUpdate();
            BigDecimal total = one(bind(linesTotal, t.w, d, orderId)).getBigDecimal(1);
            customerDeliver.setBigDecimal(1, total);
            customerDeliver.setInt(2, t.w);
            customerDeliver.setInt(3, d);
            customerDeliver.setInt(4, cId);
            customerDeliver.executeUpdate();
        }
        c.commit();
    }

    private void stockLevel(TpccInput.Txn t) throws SQLException {
        ResultSet d = one(bind(districtNext, t.w, t.d));
        int next = d.getInt(2);
        c.commit(); // districtNext locks the row: let it go before the long read
        one(bind(stockLevel, t.w, t.d, next, next - 20, t.w, t.threshold)).getInt(1);
        c.commit();
    }

    /** The customer's id, looked up by last name (the middle one of those sorted by first name) if need be. */
    private int customerId(TpccInput.Txn t) throws SQLException {
        if (t.cId != 0) {
            return t.cId;
        }
        customerByName.setInt(1, t.cW);
        customerByName.setInt(2, t.cD);
        customerByName.setString(3, t.cLast);
        ResultSet r = customerByName.executeQuery();
        int[] ids = new int[64];
        int n = 0;
        while (r.next()) {
            if (n == ids.length) {
                ids = java.util.Arrays.copyOf(ids, n * 2);
            }
            ids[n++] = r.getInt(1);
        }
        if (n == 0) {
            throw new SQLException("no customer named " + t.cLast + " in district " + t.cW + "/" + t.cD);
        }
        return ids[(n - 1) / 2];
    }

    private static PreparedStatement bind(PreparedStatement p, int... values) throws SQLException {
        for (int i = 0; i < values.length; i++) {
            p.setInt(i + 1, values[i]);
        }
        return p;
    }

    /** The query's single row, positioned on. */
    private static ResultSet one(PreparedStatement p) throws SQLException {
        ResultSet r = p.executeQuery();
        if (!r.next()) {
            throw new SQLException("no row for " + p);
        }
        return r;
    }

    private PreparedStatement prepare(String sql) throws SQLException {
        PreparedStatement p = c.prepareStatement(sql);
        statements.add(p);
        return p;
    }

    @Override
    public void close() throws SQLException {
        for (PreparedStatement p : statements) {
            p.close();
        }
    }
}
