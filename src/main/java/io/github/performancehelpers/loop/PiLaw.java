package io.github.performancehelpers.loop;

/**
 * The PI(D) control law, {@link PowerFlowController.ControlLaw#PI}: the controller's
 * {@link PowerServo} stepped on the window's driving quantile,
 * {@code rate = clamp(kp × error + ki × integral + derivative, minRate, maxRate)} with
 * {@code error = targetP99 − p99}, the builder's gains ({@code kp}, {@code ki}, {@code kd},
 * {@code derivativeFilter}) and the {@code dt} of each {@link PowerFlowController#observe(double)}.
 *
 * <p>Its steps are absolute (operations per second per millisecond of error), so its gains fit
 * one plant's scale; on a downstream whose p99 is flat up to a knee and then rises steeply it
 * cycles (see {@link KneeAwareLaw}). The servo adds the integral as it was <em>before</em> each
 * step, so the first observation can only produce {@code kp × error}; with the default gains that
 * is below any sensible {@code minRate}, and the rate climbs over several observations. Start
 * {@code rate} near where you expect to settle, or observe once with a representative sample, if
 * a slow start matters.
 *
 * <p>It is saturated when the servo's clamp bound its last step ({@link PowerServo#saturated()}).
 * It keeps none of the law-owned statistics ({@link RateLaw.Stats#NONE}) and excuses no window.
 *
 * <p>It holds no state of its own: the servo is the controller's ({@link PowerFlowController#servo()}),
 * which {@link PowerFlowController#reset()} resets.
 *
 * <p>Select it with {@link PowerFlowController.ControlLaw#PI}; the class has no public
 * constructor.
 *
 * <p><b>Thread safety.</b> Not thread-safe: the controller steps it under its loop lock.
 * {@link #saturated(double)} reads the servo's last state without it.
 *
 * @since 0.1.0
 */
public final class PiLaw implements RateLaw {

    /** The selection of this law, {@link PowerFlowController.ControlLaw#PI}. */
    static final PowerFlowController.ControlLaw CONTROL_LAW = new PowerFlowController.ControlLaw() {
        @Override
        public RateLaw create(RateLaw.Setup setup) {
            return new PiLaw(setup);
        }

        @Override
        public String toString() {
            return "PI";
        }
    };

    private final PowerServo servo;

    /** The law on the controller's servo, as {@link #CONTROL_LAW} creates it. */
    PiLaw(RateLaw.Setup setup) {
        this.servo = setup.servo();
    }

    @Override
    public double step(RateLaw.Window window) {
        return servo.step(window.reading(), window.dt());
    }

    @Override
    public boolean saturated(double rate) {
        return servo.saturated();
    }

    /** Nothing to reset: the servo is the controller's, and {@link PowerFlowController#reset()} resets it. */
    @Override
    public void reset() {
    }
}
