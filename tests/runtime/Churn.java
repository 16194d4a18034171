// Churn.java: allocates short-lived arrays and keeps a sliding window of
// some, then asks for a full collection, so every collector pauses several
// times; prints a checksum.  Used by jvm_agent_test.sh.
import java.util.ArrayList;
import java.util.List;

public class Churn {
  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 3_000_000;
    List<int[]> keep = new ArrayList<>();
    long sum = 0;
    for (int i = 0; i < n; i++) {
      int[] x = new int[16 + (i % 64)];
      x[0] = i;
      sum += x[0];
      if (i % 50 == 0) keep.add(x);
      if (keep.size() > 20000) keep.subList(0, 10000).clear();
    }
    System.gc();
    System.out.println(sum);
  }
}
