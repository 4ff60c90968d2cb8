package pipelines

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/cursus-dev/cursus/engine/deps"
	"github.com/cursus-dev/cursus/engine/steps"
)

// cursusWiring is every edge the Cursus rule (its assembler's greedy pass:
// any viable output may feed any dependency, required ones first) gives the
// built-in shared DAGs over the built-in step catalog, as
// "consumer.dependency <- producer.output score".
//
// Deliberate differences from the Cursus step data, each fixed in the
// built-in .step.yaml files rather than in the rule:
//   - Payload.custom_payload_input is payload_samples, not processing_output:
//     as processing_output every training's evaluation_output (predictions)
//     would feed it (0.5324, outside its compatible sources), and Payload
//     would ship predictions as sample requests.
//   - Package.calibration_model and the calibration steps' calibration_output
//     are model_artifacts (a fitted mapping), not processing_output: as
//     processing_output a training's evaluation_output would feed
//     Package.calibration_model in a DAG without calibration (0.5522).
//   - the tuning steps' tuning_output is model_artifacts (a folder of trial
//     models), not processing_output: as processing_output it would feed
//     Registration.model_metrics (0.5777 in pytorch_tuning_e2e).
//
// Path B of the reference (the builder-side pass that can bind an output a
// second time) is not reproduced, so e.g. XGBoostTraining.model_artifacts_input
// stays empty where Cursus binds it to the preprocessed data.
var cursusWiring = map[string][]string{
	"lightgbm_batch_inference": {
		"LightGBMModelInference_testing.model_input <- LightGBMTraining.model_output 1.0000",
		"LightGBMModelInference_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"LightGBMTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"ModelMetricsComputation_testing.eval_output <- LightGBMModelInference_testing.eval_output 1.0000",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"lightgbm_complete_e2e": {
		"LightGBMModelEval_calibration.model_input <- LightGBMTraining.model_output 1.0000",
		"LightGBMModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"LightGBMTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"ModelCalibration_calibration.evaluation_data <- LightGBMModelEval_calibration.eval_output 1.0000",
		"Package.calibration_model <- ModelCalibration_calibration.calibration_output 1.0000",
		"Package.model_input <- LightGBMTraining.model_output 1.0000",
		"Payload.model_input <- LightGBMTraining.model_output 1.0000",
		"Registration.GeneratedPayloadSamples <- Payload.payload_sample 1.0000",
		"Registration.PackagedModel <- Package.packaged_model 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"lightgbm_simple_training": {
		"LightGBMTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"lightgbm_training_with_calibration": {
		"LightGBMModelEval_calibration.model_input <- LightGBMTraining.model_output 1.0000",
		"LightGBMModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"LightGBMTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"ModelCalibration_calibration.evaluation_data <- LightGBMModelEval_calibration.eval_output 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"lightgbm_training_with_evaluation": {
		"LightGBMModelEval_calibration.model_input <- LightGBMTraining.model_output 1.0000",
		"LightGBMModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"LightGBMTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_batch_inference": {
		"ModelMetricsComputation_testing.eval_output <- PyTorchModelInference_testing.eval_output 1.0000",
		"PyTorchModelInference_testing.model_input <- PyTorchTraining.model_output 1.0000",
		"PyTorchModelInference_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"PyTorchTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_complete_e2e": {
		"ModelCalibration_calibration.evaluation_data <- PyTorchModelEval_calibration.eval_output 1.0000",
		"Package.calibration_model <- ModelCalibration_calibration.calibration_output 1.0000",
		"Package.model_input <- PyTorchTraining.model_output 1.0000",
		"Payload.model_input <- PyTorchTraining.model_output 1.0000",
		"PyTorchModelEval_calibration.model_input <- PyTorchTraining.model_output 1.0000",
		"PyTorchModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"PyTorchTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"Registration.GeneratedPayloadSamples <- Payload.payload_sample 1.0000",
		"Registration.PackagedModel <- Package.packaged_model 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_e2e_with_model_creation": {
		"BatchTransform_testing.model_name <- PyTorchModel.model_name 1.0000",
		"BatchTransform_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"ModelMetricsComputation_testing.eval_output <- BatchTransform_testing.transform_output 1.0000",
		"PyTorchModel.model_data <- PyTorchTraining.model_output 1.0000",
		"PyTorchTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_simple_training": {
		"PyTorchTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_training_with_calibration": {
		"ModelCalibration_calibration.evaluation_data <- PyTorchModelEval_calibration.eval_output 1.0000",
		"PyTorchModelEval_calibration.model_input <- PyTorchTraining.model_output 1.0000",
		"PyTorchModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"PyTorchTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_training_with_evaluation": {
		"PyTorchModelEval_calibration.model_input <- PyTorchTraining.model_output 1.0000",
		"PyTorchModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"PyTorchTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"pytorch_tuning_e2e": {
		"BatchTransform_testing.model_name <- PyTorchModel.model_name 1.0000",
		"BatchTransform_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"PyTorchModel.model_data <- PyTorchTuning.best_model 1.0000",
		"PyTorchTuning.input_path <- TabularPreprocessing_training.processed_data 0.8167",
		"Registration.PackagedModel <- PyTorchTuning.best_model 0.7755",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
	},
	"xgboost_batch_inference": {
		"ModelMetricsComputation_testing.eval_output <- XGBoostModelInference_testing.eval_output 1.0000",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelInference_testing.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelInference_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_complete_e2e": {
		"ModelCalibration_calibration.evaluation_data <- XGBoostModelEval_calibration.eval_output 1.0000",
		"Package.calibration_model <- ModelCalibration_calibration.calibration_output 1.0000",
		"Package.model_input <- XGBoostTraining.model_output 1.0000",
		"Payload.model_input <- XGBoostTraining.model_output 1.0000",
		"Registration.GeneratedPayloadSamples <- Payload.payload_sample 1.0000",
		"Registration.PackagedModel <- Package.packaged_model 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_complete_e2e_with_percentile_calibration": {
		"Package.calibration_model <- PercentileModelCalibration_calibration.calibration_output 1.0000",
		"Package.model_input <- XGBoostTraining.model_output 1.0000",
		"Payload.model_input <- XGBoostTraining.model_output 1.0000",
		"PercentileModelCalibration_calibration.evaluation_data <- XGBoostModelEval_calibration.eval_output 1.0000",
		"Registration.GeneratedPayloadSamples <- Payload.payload_sample 1.0000",
		"Registration.PackagedModel <- Package.packaged_model 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_complete_e2e_with_testing": {
		"ModelCalibration_calibration.evaluation_data <- XGBoostModelEval_calibration.eval_output 1.0000",
		"ModelMetricsComputation_testing.eval_output <- XGBoostModelInference_testing.eval_output 1.0000",
		"Package.calibration_model <- ModelCalibration_calibration.calibration_output 1.0000",
		"Package.model_input <- XGBoostTraining.model_output 1.0000",
		"Payload.model_input <- XGBoostTraining.model_output 1.0000",
		"Registration.GeneratedPayloadSamples <- Payload.payload_sample 1.0000",
		"Registration.PackagedModel <- Package.packaged_model 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostModelInference_testing.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelInference_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_e2e_with_model_creation": {
		"BatchTransform_testing.model_name <- XGBoostModel.model_name 1.0000",
		"BatchTransform_testing.processed_data <- TabularPreprocessing_testing.processed_data 1.0000",
		"ModelMetricsComputation_testing.eval_output <- BatchTransform_testing.transform_output 1.0000",
		"TabularPreprocessing_testing.input_data <- DummyDataLoading_testing.data_output 1.0000",
		"TabularPreprocessing_testing.metadata <- DummyDataLoading_testing.metadata_output 1.0000",
		"TabularPreprocessing_testing.signature <- DummyDataLoading_testing.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModel.model_data <- XGBoostTraining.model_output 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_hyperparameter_tuning": {
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostTuning.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_simple_training": {
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_training_with_calibration": {
		"ModelCalibration_calibration.evaluation_data <- XGBoostModelEval_calibration.eval_output 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_training_with_currency_conversion": {
		"CurrencyConversion_training.input_data <- TabularPreprocessing_training.processed_data 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostTraining.input_path <- CurrencyConversion_training.processed_data 0.8167",
	},
	"xgboost_training_with_evaluation": {
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_training_with_feature_engineering": {
		"FeatureSelection_training.input_data <- RiskTableMapping_training.processed_data 1.0000",
		"MissingValueImputation_training.input_data <- TabularPreprocessing_training.processed_data 1.0000",
		"RiskTableMapping_training.input_data <- MissingValueImputation_training.processed_data 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostTraining.input_path <- FeatureSelection_training.processed_data 0.8167",
	},
	"xgboost_training_with_percentile_calibration": {
		"PercentileModelCalibration_calibration.evaluation_data <- XGBoostModelEval_calibration.eval_output 1.0000",
		"TabularPreprocessing_calibration.input_data <- DummyDataLoading_calibration.data_output 1.0000",
		"TabularPreprocessing_calibration.metadata <- DummyDataLoading_calibration.metadata_output 1.0000",
		"TabularPreprocessing_calibration.signature <- DummyDataLoading_calibration.signature 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostModelEval_calibration.model_input <- XGBoostTraining.model_output 1.0000",
		"XGBoostModelEval_calibration.processed_data <- TabularPreprocessing_calibration.processed_data 1.0000",
		"XGBoostTraining.input_path <- TabularPreprocessing_training.processed_data 0.8167",
	},
	"xgboost_training_with_stratified_sampling": {
		"StratifiedSampling_training.input_data <- TabularPreprocessing_training.processed_data 1.0000",
		"TabularPreprocessing_training.input_data <- DummyDataLoading_training.data_output 1.0000",
		"TabularPreprocessing_training.metadata <- DummyDataLoading_training.metadata_output 1.0000",
		"TabularPreprocessing_training.signature <- DummyDataLoading_training.signature 1.0000",
		"XGBoostTraining.input_path <- StratifiedSampling_training.processed_data 0.8167",
	},
}

func TestBuiltinDAGsWireAsCursus(t *testing.T) {
	c := loadBuiltin(t)
	cat, _, err := steps.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.List()) != len(cursusWiring) {
		t.Errorf("%d built-in DAGs, the table lists %d", len(c.List()), len(cursusWiring))
	}
	for _, e := range c.List() {
		t.Run(e.ID, func(t *testing.T) {
			plan, err := deps.Resolve(context.Background(), e.DAG(), cat)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for node, bs := range plan.Bindings {
				for _, b := range bs {
					got = append(got, fmt.Sprintf("%s.%s <- %s.%s %.4f", node, b.Dependency, b.FromNode, b.FromOutput, b.Score))
				}
			}
			sort.Strings(got)
			want := cursusWiring[e.ID]
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("wiring differs\n got: %q\nwant: %q", got, want)
			}
			// The data fixes above leave no built-in binding outside its sources.
			if len(plan.Warnings) > 0 {
				t.Errorf("warnings: %+v", plan.Warnings)
			}
		})
	}
}
