package org.ephemera.suite;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The h2 workload's transactions, drawn once from a fixed seed: per client
 * (bound to its home warehouse, as a TPC-C terminal) a list in TPC-C's mix,
 * 45 % new-order, 43 % payment, 4 % each order-status, delivery and
 * stock-level.  One new-order in a hundred names an unused item and rolls
 * back.  Every iteration runs the same lists.
 */
final class TpccInput {
    enum Kind { NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL }

    static final class Txn {
        final Kind kind;
        final int w;
        final int d;
        int cW;
        int cD;
        int cId; // 0: look the customer up by cLast
        String cLast;
        int[] itemIds; // new-order: sorted by (supply warehouse, item) so that stock rows lock in one order
        int[] supplyW;
        int[] quantities;
        boolean rollback;
        BigDecimal amount;
        int carrier;
        int threshold;

        Txn(Kind kind, int w, int d) {
            this.kind = kind;
            this.w = w;
            this.d = d;
        }
    }

    final List<List<Txn>> clients = new ArrayList<>();
    int committedNewOrders;
    int committedOrderLines;
    int deliveriesPerWarehouseMax;
    BigDecimal payments = BigDecimal.ZERO;

    TpccInput(TpccLoader db, int perClient, long seed) {
        for (int w = 1; w <= db.warehouses; w++) {
            Random r = new Random(seed * 31 + w);
            List<Txn> list = new ArrayList<>(perClient);
            int deliveries = 0;
            for (int i = 0; i < perClient; i++) {
                int roll = r.nextInt(100);
                Kind kind = roll < 45 ? Kind.NEW_ORDER : roll < 88 ? Kind.PAYMENT : roll < 92 ? Kind.ORDER_STATUS
                        : roll < 96 ? Kind.DELIVERY : Kind.STOCK_LEVEL;
                Txn t = new Txn(kind, w, 1 + r.nextInt(TpccLoader.DISTRICTS));
                switch (kind) {
                    case NEW_ORDER:
                        newOrder(t, r, db);
                        break;
                    case PAYMENT:
                        customer(t, r, db, r.nextInt(100) < 85 ? w : remote(r, db, w));
                        t.amount = TpccLoader.cents(100 + r.nextInt(500_000 - 100 + 1));
                        payments = payments.add(t.amount);
                        break;
                    case ORDER_STATUS:
                        customer(t, r, db, w);
                        break;
                    case DELIVERY:
                        t.carrier = 1 + r.nextInt(10);
                        deliveries++;
                        break;
                    default:
                        t.threshold = 10 + r.nextInt(11);
                        break;
                }
                list.add(t);
            }
            deliveriesPerWarehouseMax = Math.max(deliveriesPerWarehouseMax, deliveries);
            clients.add(list);
        }
    }

    private void newOrder(Txn t, Random r, TpccLoader db) {
        t.cId = nurand(r, 1023, 1, db.customers);
        int n = 5 + r.nextInt(11);
        t.rollback = r.nextInt(100) == 0;
        long[] keys = new long[n];
        int k = 0;
        while (k < n) {
            int item = nurand(r, 8191, 1, db.items);
            int supply = r.nextInt(100) == 0 ? remote(r, db, t.w) : t.w;
            long key = (long) supply << 32 | item;
            boolean seen = false;
            for (int j = 0; j < k; j++) {
                seen |= keys[j] == key;
            }
            if (!seen) {
                keys[k++] = key;
            }
        }
        java.util.Arrays.sort(keys);
        t.itemIds = new int[n];
        t.supplyW = new int[n];
        t.quantities = new int[n];
        for (int i = 0; i < n; i++) {
            t.supplyW[i] = (int) (keys[i] >>> 32);
            t.itemIds[i] = (int) keys[i];
            t.quantities[i] = 1 + r.nextInt(10);
        }
        if (t.rollback) { // an unused item, last in the order: found missing after the others are done
            t.itemIds[n - 1] = db.items + 1;
            t.supplyW[n - 1] = db.warehouses;
        } else {
            committedNewOrders++;
            committedOrderLines += n;
        }
    }

    /** The customer of a payment or order-status: by last name 60 % of the time, otherwise by id. */
    private static void customer(Txn t, Random r, TpccLoader db, int cW) {
        t.cW = cW;
        t.cD = 1 + r.nextInt(TpccLoader.DISTRICTS);
        int id = nurand(r, 1023, 1, db.customers);
        if (r.nextInt(100) < 60) {
            t.cLast = db.lastNames[cW - 1][t.cD - 1][id - 1];
        } else {
            t.cId = id;
        }
    }

    private static int remote(Random r, TpccLoader db, int home) {
        if (db.warehouses == 1) {
            return home;
        }
        int w = 1 + r.nextInt(db.warehouses - 1);
        return w >= home ? w + 1 : w;
    }

    /** TPC-C's non-uniform random number in [x, y]. */
    private static int nurand(Random r, int a, int x, int y) {
        return ((r.nextInt(a + 1) | x + r.nextInt(y - x + 1)) + 42) % (y - x + 1) + x;
    }
}
