"""attnd's reproducible randomness (docs/contract.md section 7) in plain Python:
splitmix64-seeded xoshiro256**, uniforms, Box-Muller normals, Xavier-uniform
matrices and the textbook NW dataset. Written from the contract, independent
of lib/rng.c; check_golden() asserts the contract's published values."""
import math

MASK = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Rng:
    def __init__(self, seed):
        state = seed & MASK
        self.s = []
        for _ in range(4):
            state = (state + 0x9E3779B97F4A7C15) & MASK
            z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
            self.s.append(z ^ (z >> 31))

    def next(self):
        s = self.s
        result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform(self):
        return (self.next() >> 11) * 2.0 ** -53

    def normals(self, n):
        out = []
        while len(out) < n:
            u1 = self.uniform()
            u2 = self.uniform()
            if u1 == 0.0:
                continue
            r = math.sqrt(-2.0 * math.log(u1))
            out.append(r * math.cos(2.0 * math.pi * u2))
            out.append(r * math.sin(2.0 * math.pi * u2))
        return out[:n]

    def xavier(self, rows, cols):
        a = math.sqrt(6.0 / (cols + rows))
        return [[-a + 2.0 * a * self.uniform() for _ in range(cols)]
                for _ in range(rows)]


def f_true(x):
    return 2.0 * math.sin(x) + x ** 0.8


def nw_dataset(n_train=50, noise=0.5, seed=0):
    """(x_train, y_train) of docs/contract.md section 5."""
    rng = Rng(seed)
    x = sorted(5.0 * rng.uniform() for _ in range(n_train))
    z = rng.normals(n_train)
    y = [f_true(xi) + noise * zi for xi, zi in zip(x, z)]
    return x, y


def check_golden():
    r = Rng(0)
    assert r.next() == 0x99ec5f36cb75f2b4
    assert r.next() == 0xbf6e1f784956452a
    r = Rng(0)
    assert [r.uniform() for _ in range(3)] == [
        0.6012629994179048, 0.7477740925472398, 0.10301998939503632]
    assert Rng(0).normals(3) == [
        -0.01410679738124918, -1.0085864725210538, -1.8458950876958273]
    assert Rng(0).xavier(2, 3) == [
        [0.22185611608727585, 0.5428458386139836, -0.8697396267479146],
        [-0.18274417446004343, 0.510470366862243, 1.0948939664127075]]
    x, y = nw_dataset()
    assert x[0] == 0.19157748800980812, x[0]
    assert y[0] == 0.4527892370680555, y[0]


if __name__ == "__main__":
    check_golden()
    print("golden values match")
