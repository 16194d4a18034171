# The jython workload's program (runs on Jython 2.7 and CPython 3 alike).
# SCALE is set by the driver; the program leaves its report in RESULT, one
# line per kernel, and the driver compares it with the known value.
# Dictionaries are read in sorted order only: Jython's order is not CPython's.


class Lcg(object):
    """A deterministic random stream (the same on every Python)."""

    def __init__(self, seed):
        self.state = seed

    def next(self, n):
        self.state = (self.state * 1103515245 + 12345) % 2147483648
        return (self.state // 65536) % n


# --- n-body: floats and tuples -------------------------------------------
PI = 3.14159265358979323
SOLAR_MASS = 4 * PI * PI
DAYS = 365.24


def bodies():
    return [
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], SOLAR_MASS],
        [[4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01],
         [1.66007664274403694e-03 * DAYS, 7.69901118419740425e-03 * DAYS, -6.90460016972063023e-05 * DAYS],
         9.54791938424326609e-04 * SOLAR_MASS],
        [[8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01],
         [-2.76742510726862411e-03 * DAYS, 4.99852801234917238e-03 * DAYS, 2.30417297573763929e-05 * DAYS],
         2.85885980666130812e-04 * SOLAR_MASS],
        [[1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01],
         [2.96460137564761618e-03 * DAYS, 2.37847173959480950e-03 * DAYS, -2.96589568540237556e-05 * DAYS],
         4.36624404335156298e-05 * SOLAR_MASS],
        [[1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01],
         [2.68067772490389322e-03 * DAYS, 1.62824170038242295e-03 * DAYS, -9.51592254519715870e-05 * DAYS],
         5.15138902046611451e-05 * SOLAR_MASS],
    ]


def energy(bs):
    e = 0.0
    for i in range(len(bs)):
        (x, y, z), (vx, vy, vz), m = bs[i]
        e += 0.5 * m * (vx * vx + vy * vy + vz * vz)
        for j in range(i + 1, len(bs)):
            (x2, y2, z2), _, m2 = bs[j]
            dx, dy, dz = x - x2, y - y2, z - z2
            e -= m * m2 / (dx * dx + dy * dy + dz * dz) ** 0.5
    return e


def nbody(steps):
    bs = bodies()
    px = py = pz = 0.0
    for (_, (vx, vy, vz), m) in bs:
        px += vx * m
        py += vy * m
        pz += vz * m
    v = bs[0][1]
    v[0], v[1], v[2] = -px / SOLAR_MASS, -py / SOLAR_MASS, -pz / SOLAR_MASS
    pairs = [(bs[i], bs[j]) for i in range(len(bs)) for j in range(i + 1, len(bs))]
    dt = 0.01
    e0 = energy(bs)
    for _ in range(steps):
        for (([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2)) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1, b2 = m1 * mag, m2 * mag
            v1[0] -= dx * b2
            v1[1] -= dy * b2
            v1[2] -= dz * b2
            v2[0] += dx * b1
            v2[1] += dy * b1
            v2[2] += dz * b1
        for (r, [vx, vy, vz], m) in bs:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz
    return "nbody %d %.9f %.9f" % (steps, e0, energy(bs))


# --- a task scheduler: objects, method calls, queues (after Richards) ------
class Packet(object):
    def __init__(self, link, dest, kind, payload):
        self.link = link
        self.dest = dest
        self.kind = kind
        self.payload = payload


class Task(object):
    def __init__(self, ident, priority, work):
        self.ident = ident
        self.priority = priority
        self.work = work
        self.queue = []
        self.done = 0
        self.total = 0

    def run(self, sched, packet):
        self.done += 1
        self.total = (self.total * 31 + packet.payload[0] + len(packet.payload)) % 1000000007
        out = []
        for k in range(self.work):
            dest = (self.ident + packet.payload[k % len(packet.payload)] + k) % len(sched.tasks)
            payload = [(x * 7 + self.ident) % 97 for x in packet.payload[:4]] + [self.done % 13]
            out.append(Packet(None, dest, packet.kind ^ 1, payload))
        return out


class Scheduler(object):
    def __init__(self, ntasks, rng):
        self.tasks = [Task(i, rng.next(10), 1 + rng.next(2)) for i in range(ntasks)]
        self.pending = 0

    def send(self, packet):
        self.tasks[packet.dest].queue.append(packet)
        self.pending += 1

    def schedule(self, budget):
        steps = 0
        while self.pending and steps < budget:
            busy = [t for t in self.tasks if t.queue]
            busy.sort(key=lambda t: (-t.priority, t.ident))
            for t in busy[:4]:
                p = t.queue.pop(0)
                self.pending -= 1
                steps += 1
                for q in t.run(self, p):
                    if self.pending < 400:
                        self.send(q)
        return steps


def scheduler(rounds):
    rng = Lcg(12345)
    s = Scheduler(40, rng)
    for i in range(40):
        s.send(Packet(None, i, i % 2, [rng.next(97) for _ in range(6)]))
    steps = s.schedule(rounds)
    checksum = 0
    for t in s.tasks:
        checksum = (checksum * 131 + t.total + t.done) % 1000000007
    return "scheduler %d %d" % (steps, checksum)


# --- text: strings, dictionaries, sorting ----------------------------------
SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "qui", "dem", "sul", "par", "ni", "gor"]


def words(rng, n):
    out = []
    for _ in range(n):
        w = "".join(SYLLABLES[rng.next(len(SYLLABLES))] for _ in range(1 + rng.next(3)))
        out.append(w)
    return out


def text(nwords):
    rng = Lcg(777)
    ws = words(rng, nwords)
    counts = {}
    pairs = {}
    for i, w in enumerate(ws):
        counts[w] = counts.get(w, 0) + 1
        if i:
            key = ws[i - 1] + " " + w
            pairs[key] = pairs.get(key, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    lines = []
    for start in range(0, len(ws), 12):
        lines.append(" ".join(ws[start:start + 12]).capitalize() + ".")
    body = "\n".join(lines)
    upper = sum(1 for c in body if c.isupper())
    h = 0
    for k in sorted(pairs):
        h = (h * 33 + pairs[k] * len(k)) % 1000000007
    return "text %d %d %d %d %s" % (len(counts), len(pairs), upper, h,
                                    ",".join("%s=%d" % kv for kv in top))


# --- binary trees: many short-lived tuples ---------------------------------
def make_tree(depth):
    if depth == 0:
        return (None, None)
    depth -= 1
    return (make_tree(depth), make_tree(depth))


def check_tree(node):
    left, right = node
    if left is None:
        return 1
    return 1 + check_tree(left) + check_tree(right)


def trees(max_depth, rounds):
    long_lived = make_tree(max_depth)
    total = 0
    for d in range(4, max_depth + 1, 2):
        for _ in range(rounds * 2 ** (max_depth - d)):
            total += check_tree(make_tree(d))
    return "trees %d %d %d" % (max_depth, total, check_tree(long_lived))


RESULT = "\n".join([
    nbody(2000 * SCALE),
    scheduler(1500 * SCALE),
    text(4000 * SCALE),
    trees(12, SCALE),
])
