"""Demo section: a tiny offline evolution of benchmark programs, one certified by SCIP."""

from __future__ import annotations


def evolved_benchmark_section() -> None:
    """Evolve 2-D programs toward BBOB sphere/rastrigin features, then solve one with SCIP."""
    from coplug.formulations.bbo.certify import certify
    from coplug.formulations.bbo.evolve import EvolutionConfig, evolve

    config = EvolutionConfig(dim=2, targets=(1, 15), population=4, generations=2, budget=30,
                             seeds=4, sample=80, seed=5)
    result = evolve(config, progress=False)
    print(f"EoB offline: {len(result.candidates)} programs, hypervolume "
          f"{result.hypervolume[0]:.3f} -> {result.hypervolume[-1]:.3f}, "
          f"proposals {dict(sorted(result.rejections.items()))}")
    best = max(result.front, key=lambda c: c.similarity + c.differentiation)
    print(f"picked: {best.text.strip()}  (similarity {best.similarity:.3f} to {best.target}, "
          f"differentiation {best.differentiation:.3f})")
    cert = certify(best.program, time_limit=10.0)
    print(f"SCIP: status {cert.result.status.value}, optimum {cert.objective:.6g}, bound "
          f"{cert.bound:.6g}, certified {cert.certified}; best portfolio value "
          f"{best.best_value:.6g}")
