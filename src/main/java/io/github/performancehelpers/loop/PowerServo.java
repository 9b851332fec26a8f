package io.github.performancehelpers.loop;

import io.github.performancehelpers.internal.Preconditions;


/**
 * A PI(D) servo with an output clamp: the control law of the flow controller's loop.
 *
 * <p>Each {@link #step(double, double) step} takes one measurement of the process variable and
 * returns the new, clamped output:
 *
 * <pre>{@code
 * error      = setpoint - measurement
 * raw        = -kd * (measurement - previousMeasurement) / dt      (0 on the first step)
 * derivative = derivativeFilter * previousDerivative + (1 - derivativeFilter) * raw
 * output     = clamp(kp * error + ki * integral + derivative, min, max)
 * integral  += error * dt                                            (see anti-windup below)
 * }</pre>
 *
 * <p>Units are the caller's. The flow controller feeds latency in milliseconds against a latency
 * setpoint, with gains in (operations per second) per millisecond and {@code dt} in
 * milliseconds, so the output is a rate in operations per second.
 *
 * <h2>The one-step integral lag</h2>
 *
 * <p>The integral term uses the integral <em>as it was before this step</em>; this step's error
 * is added to it only afterwards. The integral's contribution is therefore always one step
 * behind, and the first step after construction or {@link #reset()} can only produce
 * {@code kp * error} (plus a zero derivative). This is deliberate and is what the flow
 * controller's tuning assumes: with {@code kp 0.05, ki 0.001, dt 1000, min 5,
 * max 210}, a constant 1 ms measurement against a 30 ms setpoint climbs
 * {@code 5.0, 30.4, 59.5, 88.5, 117.5, 146.4, 175.4, 204.4, 210.0} — the first step is
 * {@code 0.05 * 29 = 1.45}, which the clamp lifts to the floor.
 *
 * <p>The integral term is what lets the loop hold a non-zero output at zero error. With
 * {@code ki == 0} the output is {@code kp * error} alone, so a loop that meets its setpoint
 * exactly outputs zero, which the {@code min} clamp turns into the floor: a P-only servo settles
 * at its floor.
 *
 * <h2>The derivative term</h2>
 *
 * <p>The derivative acts on the measurement, not on the error, so a change of {@link #setpoint()}
 * causes no derivative kick; on the first step after construction or {@link #reset()} there is no
 * previous measurement and the raw derivative is 0. A p99 over a short window is noisy, so the
 * raw derivative passes through a first-order low-pass filter with coefficient
 * {@code derivativeFilter} in {@code [0, 1)}: {@code 0} is no filtering, values near 1 smooth
 * heavily. {@code kd} is 0 by default.
 *
 * <h2>Anti-windup: conditional integration</h2>
 *
 * <p>When the output is clamped, the step's error is <em>not</em> added to the integral if doing
 * so would push the unclamped output further past the bound that clamped it: at the
 * {@code max} bound a positive error is not integrated, at the {@code min} bound a negative
 * error is not integrated. An error of the other sign is always integrated, because it moves the
 * output back inside the range. So a servo pinned at a bound for any length of time holds an
 * integral worth at most about one step beyond the bound, and leaves the bound within a few steps
 * once the error changes sign. This rule leaves the cold-start climb above exactly as it would be
 * without anti-windup: its first step is clamped at {@code min} with a positive error, which
 * drives the output up, away from {@code min}, so it is integrated.
 *
 * <p><b>Thread safety.</b> Not safe for concurrent use: one caller at a time steps and reads a
 * servo, or the caller provides the synchronisation (the flow controller serialises its calls).
 * The configuration accessors read final fields and may be called from any thread.
 *
 * @since 0.1.0
 */
public final class PowerServo {

    /*
     * Implementation notes. step() computes the whole new state in locals and validates before
     * assigning any field, so a rejected step leaves the servo untouched. "saturated" compares
     * the unclamped output with the clamped one, so an output exactly on a bound is not
     * saturated.
     */

    private final double kp;
    private final double ki;
    private final double kd;
    private final double derivativeFilter;
    private final double setpoint;
    private final double min;
    private final double max;
    private final double dt;

    private double integral;
    private double output;
    private double lastError;
    private double lastMeasurement;
    private double filteredDerivative;
    private boolean saturated;
    private long steps;

    private PowerServo(Builder b) {
        this.kp = b.kp;
        this.ki = b.ki;
        this.kd = b.kd;
        this.derivativeFilter = b.derivativeFilter;
        this.setpoint = b.setpoint;
        this.min = b.min;
        this.max = b.max;
        this.dt = b.dt;
        reset();
    }

    /**
     * Returns a builder with the flow controller's defaults: {@code kp 0.05}, {@code ki 0.001},
     * {@code kd 0}, {@code derivativeFilter 0}, {@code setpoint 0}, no clamp
     * ({@code min -Infinity}, {@code max +Infinity}) and {@code dt 1}.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Builds a {@link PowerServo}. Each setter validates its value eagerly; {@link #build()}
     * checks {@code min < max}. A builder may be reused; each {@code build()} makes an
     * independent servo.
     *
     * <p><b>Thread safety.</b> Not safe for concurrent use: confine a builder to one thread at a
     * time.
     */
    public static final class Builder {
        private double kp = 0.05;
        private double ki = 0.001;
        private double kd = 0.0;
        private double derivativeFilter = 0.0;
        private double setpoint = 0.0;
        private double min = Double.NEGATIVE_INFINITY;
        private double max = Double.POSITIVE_INFINITY;
        private double dt = 1.0;

        private Builder() {
        }

        /**
         * Sets the proportional gain, in output units per unit of error (the flow controller:
         * (operations per second) per millisecond). Default {@code 0.05}.
         *
         * @param kp the gain, finite and {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code kp} is NaN, infinite or negative
         */
        public Builder kp(double kp) {
            this.kp = Preconditions.requireFiniteNonNegative("kp", kp);
            return this;
        }

        /**
         * Sets the integral gain, in output units per unit of (error &times; time). Default
         * {@code 0.001}. It must be non-zero for the loop to hold a non-zero output at zero
         * error (see the class documentation).
         *
         * @param ki the gain, finite and {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code ki} is NaN, infinite or negative
         */
        public Builder ki(double ki) {
            this.ki = Preconditions.requireFiniteNonNegative("ki", ki);
            return this;
        }

        /**
         * Sets the derivative gain, in output units per unit of (measurement / time); the term
         * acts on the measurement. Default {@code 0} (off).
         *
         * @param kd the gain, finite and {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code kd} is NaN, infinite or negative
         */
        public Builder kd(double kd) {
            this.kd = Preconditions.requireFiniteNonNegative("kd", kd);
            return this;
        }

        /**
         * Sets the coefficient {@code f} of the derivative's first-order low-pass filter:
         * {@code filtered = f * previousFiltered + (1 - f) * raw}. Default {@code 0} (no
         * filtering). Has no effect when {@code kd} is 0.
         *
         * @param derivativeFilter the coefficient, in {@code [0, 1)}
         * @return this builder
         * @throws IllegalArgumentException if the value is NaN or outside {@code [0, 1)}
         */
        public Builder derivativeFilter(double derivativeFilter) {
            if (!(derivativeFilter >= 0.0 && derivativeFilter < 1.0)) {
                throw new IllegalArgumentException(
                        "derivativeFilter must be in [0, 1): " + derivativeFilter);
            }
            this.derivativeFilter = derivativeFilter;
            return this;
        }

        /**
         * Sets the setpoint: the value the servo drives its measurement toward. Default
         * {@code 0}.
         *
         * @param setpoint the setpoint, finite
         * @return this builder
         * @throws IllegalArgumentException if {@code setpoint} is NaN or infinite
         */
        public Builder setpoint(double setpoint) {
            if (!Double.isFinite(setpoint)) {
                throw new IllegalArgumentException("setpoint must be finite: " + setpoint);
            }
            this.setpoint = setpoint;
            return this;
        }

        /**
         * Sets the lower bound of the output clamp. Default {@code -Infinity} (no lower bound).
         * {@link #build()} requires {@code min < max}.
         *
         * @param min the lower bound; not NaN, and not {@code +Infinity}
         * @return this builder
         * @throws IllegalArgumentException if {@code min} is NaN or {@code +Infinity}
         */
        public Builder min(double min) {
            if (Double.isNaN(min) || min == Double.POSITIVE_INFINITY) {
                throw new IllegalArgumentException("min must not be NaN or +Infinity: " + min);
            }
            this.min = min;
            return this;
        }

        /**
         * Sets the upper bound of the output clamp. Default {@code +Infinity} (no upper bound).
         * {@link #build()} requires {@code min < max}.
         *
         * @param max the upper bound; not NaN, and not {@code -Infinity}
         * @return this builder
         * @throws IllegalArgumentException if {@code max} is NaN or {@code -Infinity}
         */
        public Builder max(double max) {
            if (Double.isNaN(max) || max == Double.NEGATIVE_INFINITY) {
                throw new IllegalArgumentException("max must not be NaN or -Infinity: " + max);
            }
            this.max = max;
            return this;
        }

        /**
         * Sets the default sample interval used by {@link PowerServo#step(double)}, in the time
         * unit of the gains (the flow controller: milliseconds). Default {@code 1}.
         *
         * @param dt the interval, finite and {@code > 0}
         * @return this builder
         * @throws IllegalArgumentException if {@code dt} is NaN, infinite, zero or negative
         */
        public Builder dt(double dt) {
            this.dt = Preconditions.requireFinitePositive("dt", dt);
            return this;
        }

        /**
         * Builds the servo, in its initial state (see {@link PowerServo#reset()}).
         *
         * @return a new servo
         * @throws IllegalArgumentException if {@code min >= max}
         */
        public PowerServo build() {
            if (!(min < max)) {
                throw new IllegalArgumentException(
                        "min must be < max: min=" + min + ", max=" + max);
            }
            return new PowerServo(this);
        }
    }

    /**
     * Takes one sample with the default sample interval ({@link Builder#dt(double)}).
     *
     * @param measurement the process variable, finite
     * @return the new output, in {@code [min(), max()]}
     * @throws IllegalArgumentException if {@code measurement} is NaN or infinite, or the step
     *                                  would overflow the integral; the servo is then unchanged
     * @see #step(double, double)
     */
    public double step(double measurement) {
        return step(measurement, dt);
    }

    /**
     * Takes one sample and returns the new output. See the class documentation for the control
     * law and the anti-windup rule.
     *
     * <p>The output uses the integral as it stood before this step, and this step's error is
     * added to it only afterwards: the integral term lags one step, so the first step after
     * construction or {@link #reset()} yields {@code kp * error} alone (plus a zero derivative).
     * The lag is deliberate; the flow controller's tuning assumes it.
     *
     * @param measurement the process variable, finite
     * @param dt          the time since the previous sample, finite and {@code > 0}, in the time
     *                    unit of the gains
     * @return the new output, in {@code [min(), max()]}
     * @throws IllegalArgumentException if {@code measurement} is NaN or infinite, if {@code dt}
     *                                  is not finite and {@code > 0}, or if the step would
     *                                  overflow the integral; the servo is then unchanged
     */
    public double step(double measurement, double dt) {
        if (!Double.isFinite(measurement)) {
            throw new IllegalArgumentException("measurement must be finite: " + measurement);
        }
        Preconditions.requireFinitePositive("dt", dt);
        double error = setpoint - measurement;
        double rawDerivative = steps == 0 ? 0.0 : -kd * (measurement - lastMeasurement) / dt;
        double derivative = derivativeFilter * filteredDerivative
                + (1.0 - derivativeFilter) * rawDerivative;
        double unclamped = kp * error + ki * integral + derivative;
        double clamped = Math.min(max, Math.max(min, unclamped));
        boolean atMax = unclamped > max;
        boolean atMin = unclamped < min;
        // Conditional integration: skip only when integrating would deepen the saturation.
        boolean integrate = !(atMax && error > 0.0) && !(atMin && error < 0.0);
        double newIntegral = integrate ? integral + error * dt : integral;
        if (!Double.isFinite(newIntegral) || Double.isNaN(clamped)
                || !Double.isFinite(derivative)) {
            throw new IllegalArgumentException("measurement " + measurement + " and dt " + dt
                    + " overflow the servo's state");
        }
        this.integral = newIntegral;
        this.output = clamped;
        this.saturated = atMax || atMin;
        this.lastError = error;
        this.lastMeasurement = measurement;
        this.filteredDerivative = derivative;
        this.steps++;
        return clamped;
    }

    /**
     * Starts the servo at {@code value} (bumpless): the integral is set so that a step at zero
     * error outputs {@code value}, as a controller taking over a running plant would. For an
     * executor, whose first window must not throw a healthy rate to the floor; a
     * {@code PowerFlowController}'s own servo keeps the seed's cold start.
     */
    void presetOutput(double value) {
        this.integral = ki > 0 ? value / ki : 0.0;
        this.output = Math.min(max, Math.max(min, value));
    }

    /**
     * Returns the output of the last step; before the first step (or after {@link #reset()}),
     * {@code 0} clamped into {@code [min(), max()]}.
     *
     * @return the current output
     */
    public double output() {
        return output;
    }

    /**
     * Returns the integral of the error over time (the sum of {@code error * dt}, less the steps
     * the anti-windup rule skipped); the integral term of the next step is {@code ki} times this.
     *
     * @return the integral, in error units &times; time units
     */
    public double integral() {
        return integral;
    }

    /**
     * Returns the error of the last step, {@code setpoint - measurement}; {@code 0} before the
     * first step.
     *
     * @return the last error
     */
    public double lastError() {
        return lastError;
    }

    /**
     * Returns whether the clamp bound on the last step: the unclamped output was strictly below
     * {@code min} or strictly above {@code max}. {@code false} before the first step.
     *
     * @return {@code true} if the last output was clamped
     */
    public boolean saturated() {
        return saturated;
    }

    /**
     * Returns how many steps have been taken since construction or the last {@link #reset()}.
     *
     * @return the step count
     */
    public long steps() {
        return steps;
    }

    /**
     * Returns the setpoint.
     *
     * @return the setpoint
     */
    public double setpoint() {
        return setpoint;
    }

    /**
     * Returns the lower bound of the output clamp.
     *
     * @return the lower bound, possibly {@code -Infinity}
     */
    public double min() {
        return min;
    }

    /**
     * Returns the upper bound of the output clamp.
     *
     * @return the upper bound, possibly {@code +Infinity}
     */
    public double max() {
        return max;
    }

    /**
     * Returns the proportional gain.
     *
     * @return {@code kp}
     */
    public double kp() {
        return kp;
    }

    /**
     * Returns the integral gain.
     *
     * @return {@code ki}
     */
    public double ki() {
        return ki;
    }

    /**
     * Returns the derivative gain.
     *
     * @return {@code kd}
     */
    public double kd() {
        return kd;
    }

    /**
     * Returns the derivative filter coefficient.
     *
     * @return the coefficient, in {@code [0, 1)}
     */
    public double derivativeFilter() {
        return derivativeFilter;
    }

    /**
     * Returns the default sample interval used by {@link #step(double)}.
     *
     * @return the default {@code dt}
     */
    public double dt() {
        return dt;
    }

    /**
     * Returns the servo to its initial state: integral, last error, derivative state and step
     * count zero, not saturated, output {@code 0} clamped into {@code [min(), max()]}. The
     * configuration is kept. The next step is again a cold start (see the class documentation).
     */
    public void reset() {
        integral = 0.0;
        output = Math.min(max, Math.max(min, 0.0));
        lastError = 0.0;
        lastMeasurement = 0.0;
        filteredDerivative = 0.0;
        saturated = false;
        steps = 0;
    }

    /**
     * Returns a description of the configuration and state, for logs.
     *
     * @return a human-readable description
     */
    @Override
    public String toString() {
        return "PowerServo[kp=" + kp + ", ki=" + ki + ", kd=" + kd + ", derivativeFilter="
                + derivativeFilter + ", setpoint=" + setpoint + ", min=" + min + ", max=" + max
                + ", dt=" + dt + ", output=" + output + ", integral=" + integral + ", saturated="
                + saturated + ", steps=" + steps + "]";
    }
}
