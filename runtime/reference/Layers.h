// Batched kernels for the language's layers and losses, with compile-time
// sizes: fc, embedding, lstm, gru, dropout, xent, sigmoid_xent, mse. Generated
// code instantiates these for layers; tests and benchmarks use them directly.
#pragma once

#include "runtime/engine/BatchMath.h"
#include "runtime/engine/Kernel.h"
#include "runtime/engine/Params.h"
#include "runtime/support/Random.h"

#include <stdexcept>
#include <string>

namespace foldc::rt {

/// fc(In -> Out, act): y = act(x @ W + b). Params W: [In, Out], b: [Out].
template <int In, int Out> class FcKernel : public Kernel {
public:
  FcKernel(std::string name, int weights, int bias, Act act)
      : Kernel({std::move(name), {In}, {Out}, 0, 0, 2.0 * In * Out + 2.0 * Out}), w_(weights),
        b_(bias), act_(act) {}

  void forward(const ForwardCall &c) const override {
    ParamStore &p = *c.ctx->params;
    ConstRows<In> x(c.args[0], c.rows, In);
    Rows<Out> y(c.outs[0], c.rows, Out);
    ParamMatrix w(p.at(w_).value.data(), In, Out);
    Eigen::Map<const Eigen::Matrix<float, 1, Out>> b(p.at(b_).value.data());
    y.noalias() = x * w;
    y.rowwise() += b;
    applyActivation(act_, y);
  }

  void backward(const BackwardCall &c) const override {
    ParamStore &p = *c.ctx->params;
    ConstRows<In> x(c.args[0], c.rows, In);
    ConstRows<Out> y(c.outs[0], c.rows, Out);
    RowsMatrix<Out> dz = ConstRows<Out>(c.outGrads[0], c.rows, Out);
    activationBackward(act_, dz, y);
    ParamMatrix w(p.at(w_).value.data(), In, Out);
    ParamMatrix dw(p.at(w_).grad.data(), In, Out);
    Eigen::Map<Eigen::Matrix<float, 1, Out>> db(p.at(b_).grad.data());
    dw.noalias() += x.transpose() * dz;
    db += dz.colwise().sum();
    Rows<In>(c.argGrads[0], c.rows, In).noalias() = dz * w.transpose();
  }

private:
  int w_, b_;
  Act act_;
};

/// embedding(N, D): row i of E for the host index i (hostInts[0]). Its
/// backward touches only the rows used.
template <int N, int D> class EmbeddingKernel : public Kernel {
public:
  EmbeddingKernel(std::string name, int table)
      : Kernel({std::move(name), {}, {D}, 1, 0, 0}), e_(table) {}

  void forward(const ForwardCall &c) const override {
    gatherRows(c.ctx->params->at(e_).value.data(), N, D, c.hostInts, c.rows, c.outs[0],
               signature().name);
  }

  void backward(const BackwardCall &c) const override {
    c.ctx->params->at(e_).scatterAddRows(c.hostInts, c.rows, c.outGrads[0]);
  }

private:
  int e_;
};

/// lstm(In -> H) (docs/language.md): args (x, h, c), results (h', c').
/// g = x@W + h@U + b; i, f, o = sigmoid(g[0:H], g[H:2H], g[2H:3H]);
/// u = tanh(g[3H:4H]); c' = i*u + f*c; h' = o*tanh(c').
template <int In, int H> class LstmKernel : public Kernel {
public:
  LstmKernel(std::string name, int w, int u, int b)
      : Kernel({std::move(name), {In, H, H}, {H, H}, 0, 0, 2.0 * (In + H) * 4 * H + 12.0 * H}),
        w_(w), u_(u), b_(b) {}

  void forward(const ForwardCall &c) const override {
    Gates g = gates(c);
    Rows<H> h(c.outs[0], c.rows, H), cell(c.outs[1], c.rows, H);
    ConstRows<H> cPrev(c.args[2], c.rows, H);
    cell = g.i.cwiseProduct(g.u) + g.f.cwiseProduct(cPrev);
    h = g.o.cwiseProduct(cell.array().tanh().matrix());
  }

  void backward(const BackwardCall &c) const override {
    ParamStore &p = *c.ctx->params;
    Gates g = gates(c); // recomputed: cheaper in memory than keeping them
    ConstRows<H> cPrev(c.args[2], c.rows, H), cell(c.outs[1], c.rows, H);
    ConstRows<H> dh(c.outGrads[0], c.rows, H), dcOut(c.outGrads[1], c.rows, H);
    Mat<H> tc = cell.array().tanh().matrix();
    Mat<H> dc = dcOut + dh.cwiseProduct(g.o).cwiseProduct((1.0f - tc.array().square()).matrix());
    Mat<4 * H> dg(c.rows, 4 * H);
    dg.template leftCols<H>() =
        dc.cwiseProduct(g.u).cwiseProduct((g.i.array() * (1.0f - g.i.array())).matrix());
    dg.template middleCols<H>(H) =
        dc.cwiseProduct(cPrev).cwiseProduct((g.f.array() * (1.0f - g.f.array())).matrix());
    dg.template middleCols<H>(2 * H) =
        dh.cwiseProduct(tc).cwiseProduct((g.o.array() * (1.0f - g.o.array())).matrix());
    dg.template rightCols<H>() =
        dc.cwiseProduct(g.i).cwiseProduct((1.0f - g.u.array().square()).matrix());
    ConstRows<In> x(c.args[0], c.rows, In);
    ConstRows<H> hPrev(c.args[1], c.rows, H);
    ParamMatrix w(p.at(w_).value.data(), In, 4 * H), dw(p.at(w_).grad.data(), In, 4 * H);
    ParamMatrix u(p.at(u_).value.data(), H, 4 * H), du(p.at(u_).grad.data(), H, 4 * H);
    Eigen::Map<Eigen::Matrix<float, 1, 4 * H>> db(p.at(b_).grad.data());
    dw.noalias() += x.transpose() * dg;
    du.noalias() += hPrev.transpose() * dg;
    db += dg.colwise().sum();
    Rows<In>(c.argGrads[0], c.rows, In).noalias() = dg * w.transpose();
    Rows<H>(c.argGrads[1], c.rows, H).noalias() = dg * u.transpose();
    Rows<H>(c.argGrads[2], c.rows, H) = dc.cwiseProduct(g.f);
  }

private:
  template <int C> using Mat = RowsMatrix<C>;
  struct Gates {
    Mat<H> i, f, o, u;
  };
  Gates gates(const ForwardCall &c) const {
    ParamStore &p = *c.ctx->params;
    ConstRows<In> x(c.args[0], c.rows, In);
    ConstRows<H> h(c.args[1], c.rows, H);
    ParamMatrix w(p.at(w_).value.data(), In, 4 * H);
    ParamMatrix u(p.at(u_).value.data(), H, 4 * H);
    Eigen::Map<const Eigen::Matrix<float, 1, 4 * H>> b(p.at(b_).value.data());
    Mat<4 *H> g = x * w;
    g.noalias() += h * u;
    g.rowwise() += b;
    auto sig = [](float v) { return sigmoid(v); };
    return Gates{g.template leftCols<H>().unaryExpr(sig),
                 g.template middleCols<H>(H).unaryExpr(sig),
                 g.template middleCols<H>(2 * H).unaryExpr(sig),
                 g.template rightCols<H>().array().tanh().matrix()};
  }
  int w_, u_, b_;
};

/// gru(In -> H) as in docs/language.md: args (x, s), result s'.
/// z = sigmoid(x@Wz + s@Uz + bz), r = sigmoid(x@Wr + s@Ur + br),
/// n = tanh(x@Wn + (r*s)@Un + bn), s' = (1 - z)*n + z*s. W: [In, 3H] and
/// U: [H, 3H] hold the z, r, n blocks side by side; b: [3H].
template <int In, int H> class GruKernel : public Kernel {
public:
  GruKernel(std::string name, int w, int u, int b)
      : Kernel({std::move(name), {In, H}, {H}, 0, 0, 2.0 * (In + H) * 3 * H + 12.0 * H}), w_(w),
        u_(u), b_(b) {}

  void forward(const ForwardCall &c) const override {
    State st = state(c);
    ConstRows<H> s(c.args[1], c.rows, H);
    Rows<H>(c.outs[0], c.rows, H) = (1.0f - st.z.array()) * st.n.array() + st.z.array() * s.array();
  }

  void backward(const BackwardCall &c) const override {
    ParamStore &p = *c.ctx->params;
    State st = state(c);
    ConstRows<In> x(c.args[0], c.rows, In);
    ConstRows<H> s(c.args[1], c.rows, H), ds(c.outGrads[0], c.rows, H);
    ParamMatrix w(p.at(w_).value.data(), In, 3 * H), dw(p.at(w_).grad.data(), In, 3 * H);
    ParamMatrix u(p.at(u_).value.data(), H, 3 * H), du(p.at(u_).grad.data(), H, 3 * H);
    Eigen::Map<Eigen::Matrix<float, 1, 3 * H>> db(p.at(b_).grad.data());
    Mat<3 * H> dg(c.rows, 3 * H);
    auto z = st.z.array(), r = st.r.array(), n = st.n.array();
    dg.template leftCols<H>() = (ds.array() * (s.array() - n) * z * (1.0f - z)).matrix();
    dg.template rightCols<H>() = (ds.array() * (1.0f - z) * (1.0f - n.square())).matrix();
    Mat<H> rs = (r * s.array()).matrix();
    Mat<H> drs = dg.template rightCols<H>() * u.rightCols(H).transpose();
    dg.template middleCols<H>(H) = (drs.array() * s.array() * r * (1.0f - r)).matrix();
    dw.noalias() += x.transpose() * dg;
    du.leftCols(2 * H).noalias() += s.transpose() * dg.template leftCols<2 * H>();
    du.rightCols(H).noalias() += rs.transpose() * dg.template rightCols<H>();
    db += dg.colwise().sum();
    Rows<In>(c.argGrads[0], c.rows, In).noalias() = dg * w.transpose();
    Rows<H> dsPrev(c.argGrads[1], c.rows, H);
    dsPrev = (ds.array() * z + drs.array() * r).matrix();
    dsPrev.noalias() += dg.template leftCols<2 * H>() * u.leftCols(2 * H).transpose();
  }

private:
  template <int C> using Mat = RowsMatrix<C>;
  struct State {
    Mat<H> z, r, n;
  };
  State state(const ForwardCall &c) const {
    ParamStore &p = *c.ctx->params;
    ConstRows<In> x(c.args[0], c.rows, In);
    ConstRows<H> s(c.args[1], c.rows, H);
    ParamMatrix w(p.at(w_).value.data(), In, 3 * H), u(p.at(u_).value.data(), H, 3 * H);
    Eigen::Map<const Eigen::Matrix<float, 1, 3 * H>> b(p.at(b_).value.data());
    Mat<3 *H> g = x * w;
    g.rowwise() += b;
    Mat<2 *H> zr = g.template leftCols<2 * H>();
    zr.noalias() += s * u.leftCols(2 * H);
    zr = zr.array().logistic();
    State st{zr.template leftCols<H>(), zr.template rightCols<H>(), {}};
    Mat<H> rs = (st.r.array() * s.array()).matrix();
    st.n = g.template rightCols<H>();
    st.n.noalias() += rs * u.rightCols(H);
    st.n = st.n.array().tanh();
    return st;
  }
  int w_, u_, b_;
};

/// zeros(W) / ones(W) / any constant: a value with no arguments.
template <int W> class ConstantKernel : public Kernel {
public:
  ConstantKernel(std::string name, float value)
      : Kernel({std::move(name), {}, {W}, 0, 0, 0}), value_(value) {}
  void forward(const ForwardCall &c) const override {
    std::fill_n(c.outs[0], size_t(c.rows) * W, value_);
  }
  void backward(const BackwardCall &) const override {}

private:
  float value_;
};

/// dropout(x, p) on W floats: each element kept with probability 1 - p and
/// scaled by 1 / (1 - p), the mask drawn from (seed, instance key, element),
/// so batched and unbatched runs drop the same elements. Identity in inference.
template <int W> class DropoutKernel : public Kernel {
public:
  DropoutKernel(std::string name, float rate)
      : Kernel({std::move(name), {W}, {W}, 0, 0, double(W)}), rate_(rate) {}

  void forward(const ForwardCall &c) const override { apply(c, c.args[0], c.outs[0]); }
  void backward(const BackwardCall &c) const override { apply(c, c.outGrads[0], c.argGrads[0]); }

private:
  void apply(const ForwardCall &c, const float *in, float *out) const {
    bool active = c.ctx->training && rate_ > 0;
    float scale = 1.0f / (1.0f - rate_);
    for (int r = 0; r < c.rows; ++r)
      for (int k = 0; k < W; ++k) {
        size_t at = size_t(r) * W + k;
        bool keep = !active || counterUniform(c.ctx->seed, c.instanceKeys[r], uint64_t(k)) >= rate_;
        out[at] = keep ? (active ? in[at] * scale : in[at]) : 0.0f;
      }
  }
  float rate_;
};

/// xent(logits, label): softmax cross-entropy of K logits with hostInts[0].
template <int K> class XentKernel : public Kernel {
public:
  explicit XentKernel(std::string name) : Kernel({std::move(name), {K}, {1}, 1, 0, 4.0 * K}) {}

  void forward(const ForwardCall &c) const override {
    for (int r = 0; r < c.rows; ++r)
      c.outs[0][r] = softmaxXent(c.args[0] + size_t(r) * K, K, checkedLabel(c.hostInts[r]));
  }

  void backward(const BackwardCall &c) const override {
    for (int r = 0; r < c.rows; ++r) {
      float *d = c.argGrads[0] + size_t(r) * K;
      softmaxXent(c.args[0] + size_t(r) * K, K, checkedLabel(c.hostInts[r]), d);
      d[c.hostInts[r]] -= 1.0f;
      for (int k = 0; k < K; ++k)
        d[k] *= c.outGrads[0][r];
    }
  }

private:
  int checkedLabel(int32_t label) const {
    if (label < 0 || label >= K)
      throw std::out_of_range(signature().name + ": label " + std::to_string(label) +
                              " is outside [0, " + std::to_string(K) + ")");
    return label;
  }
};

/// sigmoid_xent(logit, target) summed over W elements (numerically stable).
template <int W> class SigmoidXentKernel : public Kernel {
public:
  explicit SigmoidXentKernel(std::string name)
      : Kernel({std::move(name), {W, W}, {1}, 0, 0, 6.0 * W}) {}

  void forward(const ForwardCall &c) const override {
    for (int r = 0; r < c.rows; ++r) {
      double sum = 0;
      for (int k = 0; k < W; ++k) {
        float z = c.args[0][r * W + k], t = c.args[1][r * W + k];
        sum += std::max(z, 0.0f) - z * t + std::log1p(std::exp(-std::abs(z)));
      }
      c.outs[0][r] = float(sum);
    }
  }

  void backward(const BackwardCall &c) const override {
    for (int r = 0; r < c.rows; ++r)
      for (int k = 0; k < W; ++k) {
        float z = c.args[0][r * W + k], t = c.args[1][r * W + k], g = c.outGrads[0][r];
        c.argGrads[0][r * W + k] = (sigmoid(z) - t) * g;
        c.argGrads[1][r * W + k] = -z * g;
      }
  }
};

/// mse(a, b): the mean over W elements of (a - b)^2.
template <int W> class MseKernel : public Kernel {
public:
  explicit MseKernel(std::string name) : Kernel({std::move(name), {W, W}, {1}, 0, 0, 3.0 * W}) {}

  void forward(const ForwardCall &c) const override {
    for (int r = 0; r < c.rows; ++r) {
      double sum = 0;
      for (int k = 0; k < W; ++k) {
        double d = double(c.args[0][r * W + k]) - c.args[1][r * W + k];
        sum += d * d;
      }
      c.outs[0][r] = float(sum / W);
    }
  }

  void backward(const BackwardCall &c) const override {
    for (int r = 0; r < c.rows; ++r)
      for (int k = 0; k < W; ++k) {
        float d = 2.0f * (c.args[0][r * W + k] - c.args[1][r * W + k]) / W * c.outGrads[0][r];
        c.argGrads[0][r * W + k] = d;
        c.argGrads[1][r * W + k] = -d;
      }
  }
};

} // namespace foldc::rt
